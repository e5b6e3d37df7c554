// Which sanitizer a build runs under, as 0/1 macros for both compilers: GCC
// defines __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang answers through
// __has_feature. Both sanitizers bring their own malloc, which keeps its own
// books (mallinfo2 and malloc_trim do not describe it).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define LETHE_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LETHE_ADDRESS_SANITIZER 1
#endif
#endif
#ifndef LETHE_ADDRESS_SANITIZER
#define LETHE_ADDRESS_SANITIZER 0
#endif

#if defined(__SANITIZE_THREAD__)
#define LETHE_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LETHE_THREAD_SANITIZER 1
#endif
#endif
#ifndef LETHE_THREAD_SANITIZER
#define LETHE_THREAD_SANITIZER 0
#endif

// A sanitizer's allocator replaces glibc's.
#define LETHE_SANITIZER_ALLOCATOR (LETHE_ADDRESS_SANITIZER || LETHE_THREAD_SANITIZER)
