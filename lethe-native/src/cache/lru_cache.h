// LruCache: a sharded, byte-bounded LRU map from a 128-bit key to a shared
// value. Used for decoded pages (the page cache) and open table readers (the
// table cache). Evicted values stay alive while a reader holds them.
//
// Thread-safety: safe for concurrent use; each shard has its own mutex.
#pragma once

#include <atomic>
#include <cstdint>
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

template <typename V>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_per_shard_(capacity / kShards + 1) {}

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
    Shard& s = ShardFor(key);
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.map.find(key);
    if (it != s.map.end()) {
      s.usage -= it->second->charge;
      s.lru.erase(it->second);
      s.map.erase(it);
    }
    s.lru.push_front(Node{key, std::move(value), charge});
    s.map[key] = s.lru.begin();
    s.usage += charge;
    while (s.usage > capacity_per_shard_ && s.lru.size() > 1) {
      Node& victim = s.lru.back();
      s.usage -= victim.charge;
      s.map.erase(victim.key);
      s.lru.pop_back();
    }
  }

  void Erase(const CacheKey& key) {
    Shard& s = ShardFor(key);
    std::lock_guard<std::mutex> l(s.mu);
    auto it = s.map.find(key);
    if (it == s.map.end()) return;
    s.usage -= it->second->charge;
    s.lru.erase(it->second);
    s.map.erase(it);
  }

  uint64_t hits() { return Sum(&Shard::hits); }
  uint64_t misses() { return Sum(&Shard::misses); }

 private:
  static constexpr size_t kShards = 16;
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
    size_t usage = 0;
    uint64_t hits = 0, misses = 0;
  };
  // The top bits: the map's buckets use the low ones.
  Shard& ShardFor(const CacheKey& key) { return shards_[(CacheKeyHash()(key) >> 58) % kShards]; }
  uint64_t Sum(uint64_t Shard::*counter) {
    uint64_t n = 0;
    for (Shard& s : shards_) {
      std::lock_guard<std::mutex> l(s.mu);
      n += s.*counter;
    }
    return n;
  }

  size_t capacity_per_shard_;
  Shard shards_[kShards];
};

}  // namespace lethe
