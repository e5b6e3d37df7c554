// LruCache: a sharded, byte-bounded LRU map from a 128-bit key to a shared
// value. Used for decoded pages (the page cache) and open table readers (the
// table cache). Evicted values stay alive while a reader holds them.
//
// Each entry is one allocation (a Handle) that is at once a node of its
// shard's hash chain and of its shard's LRU list, so a lookup walks one hash
// chain and an insert walks one chain plus one per evicted entry.
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
#include <memory>
#include <mutex>
#include <vector>

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
  LruCache(const LruCache&) = delete;
  LruCache& operator=(const LruCache&) = delete;

  std::shared_ptr<V> Lookup(const CacheKey& key) {
    const size_t hash = CacheKeyHash()(key);
    Shard& s = ShardFor(hash);
    std::lock_guard<std::mutex> l(s.mu);
    Handle* e = *s.Find(key, hash);
    if (e == nullptr) {
      s.misses++;
      return nullptr;
    }
    s.Unlink(e);
    s.PushFront(e);
    s.hits++;
    return e->value;
  }

  void Insert(const CacheKey& key, std::shared_ptr<V> value, size_t charge) {
    const size_t hash = CacheKeyHash()(key);
    Handle* fresh = new Handle(key, hash, std::move(value), charge);
    Handle* dead = nullptr;  // freed after the lock is released
    {
      Shard& s = ShardFor(hash);
      std::lock_guard<std::mutex> l(s.mu);
      Handle** slot = s.Find(key, hash);
      if (Handle* old = *slot) {
        fresh->next_hash = old->next_hash;
        *slot = fresh;
        s.Unlink(old);
        s.usage -= old->charge;
        old->next_hash = dead;
        dead = old;
      } else {
        *slot = fresh;
        s.count++;
        if (s.count > s.buckets.size()) s.Grow();
      }
      s.PushFront(fresh);
      s.usage += charge;
      EvictTo(s, ShardCapacity(), &dead);
    }
    Free(dead);
  }

  void Erase(const CacheKey& key) {
    const size_t hash = CacheKeyHash()(key);
    Handle* dead = nullptr;
    {
      Shard& s = ShardFor(hash);
      std::lock_guard<std::mutex> l(s.mu);
      if (Handle* e = *s.Find(key, hash)) s.Remove(e, &dead);
    }
    Free(dead);
  }

  // Erases every entry whose key satisfies pred.
  template <typename Pred>
  void EraseIf(Pred pred) {
    Handle* dead = nullptr;
    for (Shard& s : shards_) {
      std::lock_guard<std::mutex> l(s.mu);
      for (Links* n = s.lru.next; n != &s.lru;) {
        Links* next = n->next;
        Handle* e = static_cast<Handle*>(n);
        if (pred(e->key)) s.Remove(e, &dead);
        n = next;
      }
    }
    Free(dead);
  }

  // Sets the reservation; when it grows, evicts what no longer fits.
  // Returns the charge evicted.
  size_t SetReserved(size_t bytes) {
    size_t before = reserved_.exchange(bytes, std::memory_order_relaxed);
    if (bytes <= before) return 0;
    const size_t cap = ShardCapacity();
    Handle* dead = nullptr;
    size_t evicted = 0;
    for (Shard& s : shards_) {
      std::lock_guard<std::mutex> l(s.mu);
      evicted += EvictTo(s, cap, &dead);
    }
    Free(dead);
    return evicted;
  }

  size_t capacity() const { return capacity_; }
  uint64_t hits() { return Sum(&Shard::hits); }
  uint64_t misses() { return Sum(&Shard::misses); }
  // Total charge of the entries held (not the reservation).
  size_t usage() { return static_cast<size_t>(Sum(&Shard::usage)); }

 private:
  struct Links {
    Links* prev = this;
    Links* next = this;
  };
  struct Handle : Links {
    Handle(const CacheKey& k, size_t h, std::shared_ptr<V> v, size_t c)
        : key(k), hash(h), value(std::move(v)), charge(c) {}
    CacheKey key;
    size_t hash;
    std::shared_ptr<V> value;
    size_t charge;
    Handle* next_hash = nullptr;  // the bucket's chain; also the chain of dead entries
  };
  // A cache line of its own: threads working in different shards share nothing.
  // Invariants: every entry is in exactly one bucket chain and in the LRU
  // list; count is their number and usage the sum of their charges.
  struct alignas(64) Shard {
    std::mutex mu;
    Links lru;  // circular; lru.next is the most recently used entry
    std::vector<Handle*> buckets = std::vector<Handle*>(16);  // a power of two
    size_t count = 0;
    uint64_t usage = 0;
    uint64_t hits = 0, misses = 0;

    Shard() = default;
    Shard(const Shard&) = delete;
    Shard& operator=(const Shard&) = delete;
    ~Shard() {
      for (Links* n = lru.next; n != &lru;) {
        Links* next = n->next;
        delete static_cast<Handle*>(n);
        n = next;
      }
    }
    // The slot that points at key's entry, or the null slot ending its chain.
    Handle** Find(const CacheKey& key, size_t hash) {
      Handle** p = &buckets[hash & (buckets.size() - 1)];
      while (*p != nullptr && ((*p)->hash != hash || !((*p)->key == key))) p = &(*p)->next_hash;
      return p;
    }
    void Grow() {
      std::vector<Handle*> grown(buckets.size() * 2);
      for (Handle* chain : buckets) {
        while (chain != nullptr) {
          Handle* next = chain->next_hash;
          Handle*& head = grown[chain->hash & (grown.size() - 1)];
          chain->next_hash = head;
          head = chain;
          chain = next;
        }
      }
      buckets.swap(grown);
    }
    void Unlink(Links* e) {
      e->prev->next = e->next;
      e->next->prev = e->prev;
    }
    void PushFront(Links* e) {
      e->next = lru.next;
      e->prev = &lru;
      lru.next->prev = e;
      lru.next = e;
    }
    // Takes e out of the shard and onto the dead chain.
    void Remove(Handle* e, Handle** dead) {
      Handle** slot = Find(e->key, e->hash);
      *slot = e->next_hash;
      Unlink(e);
      count--;
      usage -= e->charge;
      e->next_hash = *dead;
      *dead = e;
    }
  };

  // The top bits: the buckets use the low ones.
  Shard& ShardFor(size_t hash) { return shards_[(static_cast<uint64_t>(hash) >> 58) % kShards]; }
  size_t ShardCapacity() const {
    size_t reserved = std::min(reserved_.load(std::memory_order_relaxed), capacity_);
    return (capacity_ - reserved) / kShards + 1;
  }
  // Returns the charge evicted.
  size_t EvictTo(Shard& s, size_t cap, Handle** dead) {
    const size_t before = s.usage;
    while (s.usage > cap && s.count > keep_) s.Remove(static_cast<Handle*>(s.lru.prev), dead);
    return before - s.usage;
  }
  static void Free(Handle* dead) {
    while (dead != nullptr) {
      Handle* next = dead->next_hash;
      delete dead;
      dead = next;
    }
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
