// LruCache: a sharded, byte-bounded LRU map from a 128-bit key to a shared
// value. Used for decoded pages (the page cache) and open table readers (the
// table cache). Evicted values stay alive while a reader holds them.
//
// Entries leave the cache outside its locks: a value's destructor may take
// other locks (a table reader gives its memory back to the budget).
//
// A reservation takes part of the capacity for memory held elsewhere (on a
// memory budget: write buffers and pinned table readers), so that the
// entries and the reservation together stay within the capacity.
//
// Thread-safety: safe for concurrent use; each shard has its own mutex.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iterator>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace lethe {

struct CacheKey {
  uint64_t hi = 0, lo = 0;
  bool operator==(const CacheKey& o) const { return hi == o.hi && lo == o.lo; }
};
struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const {
    uint64_t h = k.hi * 0x9e3779b97f4a7c15ull ^ (k.lo + 0x632be59bd9b4e019ull);
    h ^= h >> 29;
    return static_cast<size_t>(h * 0xbf58476d1ce4e5b9ull);
  }
};

template <typename V, size_t kShards = 16>
class LruCache {
 public:
  // keep_newest: a shard keeps its newest entry even when it alone exceeds
  // the shard's capacity (for pages a reader is about to use); without it
  // the capacity is a strict bound.
  explicit LruCache(size_t capacity, bool keep_newest = true) : capacity_(capacity), keep_(keep_newest ? 1 : 0) {}

  std::shared_ptr<V> Lookup(const CacheKey& key) {
    Shard& s = ShardFor(key);
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.map.find(key);
    if (it == s.map.end()) {
      s.misses++;
      return nullptr;
    }
    s.lru.splice(s.lru.begin(), s.lru, it->second);
    s.hits++;
    return it->second->value;
  }

  void Insert(const CacheKey& key, std::shared_ptr<V> value, size_t charge) {
    std::list<Node> dead;  // destroyed after the lock is released
    Shard& s = ShardFor(key);
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.map.find(key);
    if (it != s.map.end()) Remove(s, it->second, &dead);
    s.lru.push_front(Node{key, std::move(value), charge});
    s.map[key] = s.lru.begin();
    s.usage += charge;
    EvictTo(s, ShardCapacity(), &dead);
  }

  void Erase(const CacheKey& key) {
    std::list<Node> dead;
    Shard& s = ShardFor(key);
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.map.find(key);
    if (it != s.map.end()) Remove(s, it->second, &dead);
  }

  // Erases every entry whose key satisfies pred.
  template <typename Pred>
  void EraseIf(Pred pred) {
    std::list<Node> dead;
    for (Shard& s : shards_) {
      std::lock_guard<std::mutex> l(s.mu);
      for (auto it = s.lru.begin(); it != s.lru.end();) {
        auto next = std::next(it);
        if (pred(it->key)) Remove(s, it, &dead);
        it = next;
      }
    }
  }

  // Sets the reservation; when it grows, evicts what no longer fits.
  void SetReserved(size_t bytes) {
    size_t before = reserved_.exchange(bytes, std::memory_order_relaxed);
    if (bytes <= before) return;
    const size_t cap = ShardCapacity();
    std::list<Node> dead;
    for (Shard& s : shards_) {
      std::lock_guard<std::mutex> l(s.mu);
      EvictTo(s, cap, &dead);
    }
  }

  size_t capacity() const { return capacity_; }
  uint64_t hits() { return Sum(&Shard::hits); }
  uint64_t misses() { return Sum(&Shard::misses); }
  // Total charge of the entries held (not the reservation).
  size_t usage() { return static_cast<size_t>(Sum(&Shard::usage)); }

 private:
  struct Node {
    CacheKey key;
    std::shared_ptr<V> value;
    size_t charge;
  };
  // A cache line of its own: threads working in different shards share nothing.
  struct alignas(64) Shard {
    std::mutex mu;
    std::list<Node> lru;  // most recently used first
    std::unordered_map<CacheKey, typename std::list<Node>::iterator, CacheKeyHash> map;
    uint64_t usage = 0;
    uint64_t hits = 0, misses = 0;
  };
  // The top bits: the map's buckets use the low ones.
  Shard& ShardFor(const CacheKey& key) { return shards_[(CacheKeyHash()(key) >> 58) % kShards]; }
  size_t ShardCapacity() const {
    size_t reserved = std::min(reserved_.load(std::memory_order_relaxed), capacity_);
    return (capacity_ - reserved) / kShards + 1;
  }
  static void Remove(Shard& s, typename std::list<Node>::iterator it, std::list<Node>* dead) {
    s.usage -= it->charge;
    s.map.erase(it->key);
    dead->splice(dead->end(), s.lru, it);
  }
  void EvictTo(Shard& s, size_t cap, std::list<Node>* dead) {
    while (s.usage > cap && s.lru.size() > keep_) Remove(s, std::prev(s.lru.end()), dead);
  }
  uint64_t Sum(uint64_t Shard::*counter) {
    uint64_t n = 0;
    for (Shard& s : shards_) {
      std::lock_guard<std::mutex> l(s.mu);
      n += s.*counter;
    }
    return n;
  }

  const size_t capacity_;
  const size_t keep_;
  std::atomic<size_t> reserved_{0};
  Shard shards_[kShards];
};

}  // namespace lethe
