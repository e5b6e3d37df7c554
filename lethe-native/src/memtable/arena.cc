#include "memtable/arena.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace lethe {

Arena::~Arena() {
  for (char* b : blocks_) std::free(b);
  for (char* b : huge_blocks_) munmap(b, kHugeBlockSize);
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
  char* p = nullptr;
  if (huge) {
    // Room first, so that recording the mapped block cannot throw and leak it.
    if (huge_blocks_.size() == huge_blocks_.capacity()) huge_blocks_.reserve(2 * huge_blocks_.size() + 1);
    p = MapHugeBlock();
    huge_blocks_.push_back(p);
  } else {
    p = static_cast<char*>(std::malloc(bytes));
    if (p == nullptr) throw std::bad_alloc();
    blocks_.push_back(p);
  }
  usage_.fetch_add(bytes + sizeof(void*), std::memory_order_relaxed);
  return p;
}

char* Arena::MapHugeBlock() {
  // Twice the size, so that an aligned block lies inside; the rest is unmapped.
  const size_t len = 2 * kHugeBlockSize;
  void* mapped = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(mapped);
  const uintptr_t block = (start + kHugeBlockSize - 1) & ~(uintptr_t{kHugeBlockSize} - 1);
  if (block > start) munmap(mapped, block - start);
  const uintptr_t end = block + kHugeBlockSize;
  if (start + len > end) munmap(reinterpret_cast<void*>(end), start + len - end);
#ifdef MADV_HUGEPAGE
  // Advice only: without transparent huge pages the block stays in 4 KiB pages.
  madvise(reinterpret_cast<void*>(block), kHugeBlockSize, MADV_HUGEPAGE);
#endif
  return reinterpret_cast<char*>(block);
}

}  // namespace lethe
