// HeapUsage: the C allocator's heaps in this process, as glibc's mallinfo2
// reports them (all zero with another C library). The engine's page cache,
// open tables and compactions allocate from them, as does everything else
// in the process that calls malloc (a JVM's own native memory too);
// memtables map their blocks apart from them.
//
// What the allocator keeps free stays resident until a heap trim gives its
// whole pages back (Options::heap_trim_interval_us); after one, `free` still
// counts those pages, which are no longer resident. So `free` bounds from
// above what fragmentation and untrimmed frees add to the resident set.
//
// Cost: glibc walks each arena's free chunks under that arena's lock, which
// takes milliseconds on a large, fragmented heap; callers take it at most
// about once per second (the Flink backend's gauges do).
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <cstddef>

namespace lethe {

struct HeapUsage {
  size_t mapped = 0;  // taken from the operating system: the arenas and chunks mapped alone
  size_t in_use = 0;  // of that, allocated
  size_t free = 0;    // of that, kept free for later allocations
};

HeapUsage GetHeapUsage();

}  // namespace lethe
