// Arena: bump allocation for memtable entries, freed all at once when the
// memtable is dropped. Not thread-safe (one writer); MemoryUsage() may be
// read concurrently.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace lethe {

class Arena {
 public:
  Arena() = default;
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

 private:
  // Blocks are 64 KiB; larger allocations get a block of their own so a big
  // value does not waste the rest of the current block.
  static constexpr size_t kBlockSize = 64 * 1024;

  char* AllocateFallback(size_t bytes) {
    if (bytes > kBlockSize / 4) return NewBlock(bytes);
    ptr_ = NewBlock(kBlockSize);
    remaining_ = kBlockSize;
    char* result = ptr_;
    ptr_ += bytes;
    remaining_ -= bytes;
    return result;
  }
  char* NewBlock(size_t bytes) {
    blocks_.push_back(std::make_unique<char[]>(bytes));
    usage_.fetch_add(bytes + sizeof(void*), std::memory_order_relaxed);
    return blocks_.back().get();
  }

  char* ptr_ = nullptr;
  size_t remaining_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::atomic<size_t> usage_{0};
};

}  // namespace lethe
