// RecycledBuffer: a heap buffer for a page, recycled by the thread that
// frees it.
//
// A read allocates a page buffer, and the page cache frees one when it
// evicts, mostly on another thread than the one that allocated it. glibc's
// malloc keeps only small chunks in its per-thread cache: a page-sized chunk
// goes back to the arena of the thread that allocated it, under that arena's
// lock, so two threads reading pages contend for the allocator on every
// page. Instead, a freed buffer of up to 64 KiB joins a small stock of the
// freeing thread, by size class, and serves that thread's next allocation
// of about its size; only what overflows the stock goes back to malloc.
//
// Each thread's stock holds at most StockLimit() bytes, outside every memory
// budget. Under AddressSanitizer nothing is recycled, so that it still sees
// every use of a page after it was freed.
//
// Thread-safety: a buffer may be allocated on one thread and freed on
// another; one buffer is not safe for concurrent moves.
#pragma once

#include <cstddef>

namespace lethe {

class RecycledBuffer {
 public:
  RecycledBuffer() = default;
  // At least `size` bytes (capacity() says how many).
  explicit RecycledBuffer(size_t size);
  ~RecycledBuffer() { Release(); }
  RecycledBuffer(RecycledBuffer&& other) noexcept : data_(other.data_), capacity_(other.capacity_) {
    other.data_ = nullptr;
    other.capacity_ = 0;
  }
  RecycledBuffer& operator=(RecycledBuffer&& other) noexcept;
  RecycledBuffer(const RecycledBuffer&) = delete;
  RecycledBuffer& operator=(const RecycledBuffer&) = delete;

  char* data() const { return data_; }
  size_t capacity() const { return capacity_; }

  // The bytes the calling thread keeps for reuse, and the most it keeps.
  static size_t StockedBytes();
  static size_t StockLimit();

 private:
  void Release();

  char* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace lethe
