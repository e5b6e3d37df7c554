#include "memtable/arena.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace lethe {

Arena::~Arena() {
  for (char* b : blocks_) std::free(b);
}

char* Arena::AllocateFallback(size_t bytes) {
  const bool huge = usage_.load(std::memory_order_relaxed) >= kHugeAfter;
  const size_t block = huge ? kHugeBlockSize : block_size_;
  if (bytes > block / 4) return NewBlock(bytes, false);
  ptr_ = NewBlock(block, huge);
  remaining_ = block;
  char* result = ptr_;
  ptr_ += bytes;
  remaining_ -= bytes;
  return result;
}

char* Arena::NewBlock(size_t bytes, bool huge) {
  void* p = huge ? std::aligned_alloc(kHugeBlockSize, bytes) : std::malloc(bytes);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  // Advice only: without transparent huge pages the block stays in 4 KiB pages.
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);
#endif
  blocks_.push_back(static_cast<char*>(p));
  usage_.fetch_add(bytes + sizeof(void*), std::memory_order_relaxed);
  return static_cast<char*>(p);
}

}  // namespace lethe
