// LiveCounter: how many objects of a kind exist now. Each holds a token for
// its lifetime; the count is read without a lock (for statistics).
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace lethe {

class LiveCounter {
 public:
  // Counts one object while it lives. Movable, not copyable.
  class Token {
   public:
    explicit Token(LiveCounter* counter) : counter_(counter) { counter_->n_.fetch_add(1, std::memory_order_relaxed); }
    ~Token() {
      if (counter_ != nullptr) counter_->n_.fetch_sub(1, std::memory_order_relaxed);
    }
    Token(Token&& other) noexcept : counter_(std::exchange(other.counter_, nullptr)) {}
    Token(const Token&) = delete;
    Token& operator=(const Token&) = delete;
    Token& operator=(Token&&) = delete;

   private:
    LiveCounter* counter_;
  };

  uint64_t value() const { return n_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> n_{0};
};

}  // namespace lethe
