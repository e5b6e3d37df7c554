#include "util/recycled_buffer.h"

#include <algorithm>
#include <array>
#include <new>

#include "util/sanitizers.h"

namespace lethe {
namespace {

// Under ASan every buffer goes back to the allocator, which then sees each use
// after free.
constexpr bool kRecycle = !LETHE_ADDRESS_SANITIZER;

// Buffers come in classes of kGranule bytes; class c holds c * kGranule.
constexpr size_t kGranule = 128;
constexpr size_t kMaxRecycled = 64u << 10;
constexpr size_t kClasses = kMaxRecycled / kGranule;
constexpr size_t kStockLimit = 128u << 10;
// An allocation takes a stocked buffer up to this many classes larger.
constexpr size_t kClassSlack = 3;

// One thread's buffers, each class a list chained through the buffers'
// first bytes.
struct Stock {
  std::array<void*, kClasses + 1> heads{};
  size_t bytes = 0;

  void* Take(size_t c) {
    void* head = heads[c];
    heads[c] = *static_cast<void**>(head);
    bytes -= c * kGranule;
    return head;
  }
  void Put(void* buffer, size_t c) {
    *static_cast<void**>(buffer) = heads[c];
    heads[c] = buffer;
    bytes += c * kGranule;
  }
};

// Null once the thread's stock is gone (a buffer freed by another
// thread-local's destructor at thread exit goes to malloc).
thread_local Stock* current = nullptr;
thread_local bool stock_gone = false;

struct StockOwner {
  Stock stock;
  StockOwner() { current = &stock; }
  ~StockOwner() {
    current = nullptr;
    stock_gone = true;
    for (size_t c = 1; c <= kClasses; c++) {
      while (stock.heads[c] != nullptr) ::operator delete(stock.Take(c));
    }
  }
};

Stock* ThisThreadsStock() {
  if (!kRecycle || stock_gone) return nullptr;
  if (current == nullptr) {
    thread_local StockOwner owner;
  }
  return current;
}

}  // namespace

RecycledBuffer::RecycledBuffer(size_t size) {
  const size_t c = size == 0 ? 1 : (size + kGranule - 1) / kGranule;
  if (c > kClasses) {
    capacity_ = size;
    data_ = static_cast<char*>(::operator new(size));
    return;
  }
  if (Stock* stock = ThisThreadsStock()) {
    for (size_t k = c; k <= std::min(c + kClassSlack, kClasses); k++) {
      if (stock->heads[k] == nullptr) continue;
      capacity_ = k * kGranule;
      data_ = static_cast<char*>(stock->Take(k));
      return;
    }
  }
  capacity_ = c * kGranule;
  data_ = static_cast<char*>(::operator new(capacity_));
}

RecycledBuffer& RecycledBuffer::operator=(RecycledBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = other.data_;
    capacity_ = other.capacity_;
    other.data_ = nullptr;
    other.capacity_ = 0;
  }
  return *this;
}

void RecycledBuffer::Release() {
  if (data_ == nullptr) return;
  Stock* stock = capacity_ <= kMaxRecycled && capacity_ % kGranule == 0 ? ThisThreadsStock() : nullptr;
  if (stock != nullptr && stock->bytes + capacity_ <= kStockLimit) {
    stock->Put(data_, capacity_ / kGranule);
  } else {
    ::operator delete(data_);
  }
  data_ = nullptr;
  capacity_ = 0;
}

size_t RecycledBuffer::StockedBytes() {
  Stock* stock = ThisThreadsStock();
  return stock == nullptr ? 0 : stock->bytes;
}

size_t RecycledBuffer::StockLimit() { return kRecycle ? kStockLimit : 0; }

}  // namespace lethe
