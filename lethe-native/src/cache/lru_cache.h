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
// Prefetch lets a caller with several lookups to make start fetching what
// each will read first, without a lock, so that their memory waits overlap
// (a lookup's lock would otherwise order them one after the other). It
// reads a chain's head only: the heads are atomic, and the bucket arrays a
// shard grew out of stay allocated as long as the shard (together no larger
// than its current one), so such a read never meets freed memory.
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

  // Starts fetching into the CPU cache the first entry of key's chain. Takes
  // no lock and changes nothing.
  void Prefetch(const CacheKey& key) const {
    const size_t hash = CacheKeyHash()(key);
    const Buckets* b = ShardFor(hash).buckets.load(std::memory_order_acquire);
    if (const Handle* e = b->heads[hash & b->mask].load(std::memory_order_relaxed)) {
      __builtin_prefetch(e);
      __builtin_prefetch(reinterpret_cast<const char*>(e) + sizeof(Handle) - 1);
    }
  }

  std::shared_ptr<V> Lookup(const CacheKey& key) {
    const size_t hash = CacheKeyHash()(key);
    Shard& s = ShardFor(hash);
    std::lock_guard<std::mutex> l(s.mu);
    Handle* e = s.Find(key, hash)->load(std::memory_order_relaxed);
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
      std::atomic<Handle*>* slot = s.Find(key, hash);
      if (Handle* old = slot->load(std::memory_order_relaxed)) {
        fresh->next_hash.store(old->next_hash.load(std::memory_order_relaxed), std::memory_order_relaxed);
        slot->store(fresh, std::memory_order_relaxed);
        s.Unlink(old);
        s.usage -= old->charge;
        old->next_hash.store(dead, std::memory_order_relaxed);
        dead = old;
      } else {
        slot->store(fresh, std::memory_order_relaxed);
        s.count++;
        if (s.count > s.tables.back()->mask + 1) s.Grow();
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
      if (Handle* e = s.Find(key, hash)->load(std::memory_order_relaxed)) s.Remove(e, &dead);
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
    // The bucket's chain; also the chain of dead entries. Atomic (relaxed,
    // changed under the shard's lock) as a chain's head may be read by Prefetch.
    std::atomic<Handle*> next_hash{nullptr};
  };
  // A power-of-two array of chain heads.
  struct Buckets {
    explicit Buckets(size_t n) : mask(n - 1), heads(std::make_unique<std::atomic<Handle*>[]>(n)) {}
    const size_t mask;
    const std::unique_ptr<std::atomic<Handle*>[]> heads;
  };
  // A cache line of its own: threads working in different shards share nothing.
  // Invariants: every entry is in exactly one bucket chain and in the LRU
  // list; count is their number and usage the sum of their charges.
  struct alignas(64) Shard {
    std::mutex mu;
    Links lru;  // circular; lru.next is the most recently used entry
    // Every bucket array the shard had, the current one last (Prefetch may
    // still read an older one), and the current one for Prefetch.
    std::vector<std::unique_ptr<Buckets>> tables;
    std::atomic<const Buckets*> buckets;
    size_t count = 0;
    uint64_t usage = 0;
    uint64_t hits = 0, misses = 0;

    Shard() : tables(1), buckets(nullptr) {
      tables[0] = std::make_unique<Buckets>(16);
      buckets.store(tables[0].get(), std::memory_order_release);
    }
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
    std::atomic<Handle*>* Find(const CacheKey& key, size_t hash) {
      const Buckets& b = *tables.back();
      std::atomic<Handle*>* p = &b.heads[hash & b.mask];
      for (Handle* e; (e = p->load(std::memory_order_relaxed)) != nullptr && (e->hash != hash || !(e->key == key));) {
        p = &e->next_hash;
      }
      return p;
    }
    void Grow() {
      const Buckets& old = *tables.back();
      auto grown = std::make_unique<Buckets>(2 * (old.mask + 1));
      for (size_t i = 0; i <= old.mask; i++) {
        for (Handle* chain = old.heads[i].load(std::memory_order_relaxed); chain != nullptr;) {
          Handle* next = chain->next_hash.load(std::memory_order_relaxed);
          std::atomic<Handle*>& head = grown->heads[chain->hash & grown->mask];
          chain->next_hash.store(head.load(std::memory_order_relaxed), std::memory_order_relaxed);
          head.store(chain, std::memory_order_relaxed);
          chain = next;
        }
      }
      buckets.store(grown.get(), std::memory_order_release);
      tables.push_back(std::move(grown));
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
      Find(e->key, e->hash)->store(e->next_hash.load(std::memory_order_relaxed), std::memory_order_relaxed);
      Unlink(e);
      count--;
      usage -= e->charge;
      e->next_hash.store(*dead, std::memory_order_relaxed);
      *dead = e;
    }
  };

  // The top bits: the buckets use the low ones.
  Shard& ShardFor(size_t hash) { return shards_[(static_cast<uint64_t>(hash) >> 58) % kShards]; }
  const Shard& ShardFor(size_t hash) const { return shards_[(static_cast<uint64_t>(hash) >> 58) % kShards]; }
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
      Handle* next = dead->next_hash.load(std::memory_order_relaxed);
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
