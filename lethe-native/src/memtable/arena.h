// Arena: bump allocation for memtable entries, freed all at once when the
// memtable is dropped. Not thread-safe (one writer); MemoryUsage() may be
// read concurrently.
//
// An insert or lookup in a memtable visits a leaf and the nodes above it, and
// reads entries, spread over all of its memory. Past a few MiB those visits miss the TLB as well as
// the caches, and a TLB miss costs a page-table walk (two levels of them in a
// virtual machine). So once an arena holds kHugeAfter bytes, it takes its
// memory in blocks of 2 MiB, aligned and marked for transparent huge pages:
// a 64 MiB memtable then needs 32 TLB entries instead of 16,384. Small
// memtables (most column families) keep small blocks.
//
// The 2 MiB blocks are mapped from the operating system and unmapped when the
// arena goes, not taken from malloc's heap: a memtable freed into the heap
// stayed resident until the next heap trim while other allocations (pages
// read, compaction buffers) took fresh heap memory, and the huge-page advice
// stayed on those heap ranges after the memtable left them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lethe {

class Arena {
 public:
  // block_size: the size of the small blocks (a memtable whose size is
  // known ahead, such as the survivors of a compaction in memory, takes
  // smaller ones than kBlockSize).
  explicit Arena(size_t block_size = kBlockSize) : block_size_(block_size) {}
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  char* Allocate(size_t bytes) { return AllocateAligned(bytes, 1); }
  char* AllocateAligned(size_t bytes, size_t align = alignof(void*)) {
    size_t pad = (align - (reinterpret_cast<uintptr_t>(ptr_) & (align - 1))) & (align - 1);
    if (bytes + pad <= remaining_) {
      char* result = ptr_ + pad;
      ptr_ += bytes + pad;
      remaining_ -= bytes + pad;
      return result;
    }
    return AllocateFallback(bytes);
  }
  size_t MemoryUsage() const { return usage_.load(std::memory_order_relaxed); }

  static constexpr size_t kBlockSize = 64 * 1024;
  static constexpr size_t kHugeBlockSize = 2 * 1024 * 1024;
  static constexpr size_t kHugeAfter = 4 * 1024 * 1024;

 private:
  // Blocks are block_size_ (64 KiB unless set), then 2 MiB; an allocation larger than a quarter
  // block gets a block of its own, so a big value does not waste the rest of
  // the current block.
  char* AllocateFallback(size_t bytes);
  char* NewBlock(size_t bytes, bool huge);
  static char* MapHugeBlock();  // kHugeBlockSize bytes on a kHugeBlockSize boundary

  const size_t block_size_;
  char* ptr_ = nullptr;
  size_t remaining_ = 0;
  std::vector<char*> blocks_;       // each from malloc: freed with free
  std::vector<char*> huge_blocks_;  // each from MapHugeBlock: unmapped
  std::atomic<size_t> usage_{0};
};

}  // namespace lethe
