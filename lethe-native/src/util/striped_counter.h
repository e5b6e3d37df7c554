// StripedCounter: a counter that many threads add to without sharing a cache
// line: each thread adds to one of several stripes, and a read sums them.
// Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

namespace lethe {

class StripedCounter {
 public:
  void Add(uint64_t n) { stripes_[ThisThreadStripe()].v.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Sum() const {
    uint64_t n = 0;
    for (const Stripe& s : stripes_) n += s.v.load(std::memory_order_relaxed);
    return n;
  }

 private:
  static constexpr size_t kStripes = 16;
  struct alignas(64) Stripe {
    std::atomic<uint64_t> v{0};
  };
  static size_t ThisThreadStripe() {
    static thread_local const size_t stripe = std::hash<std::thread::id>()(std::this_thread::get_id()) % kStripes;
    return stripe;
  }
  Stripe stripes_[kStripes];
};

}  // namespace lethe
