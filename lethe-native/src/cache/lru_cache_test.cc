#include "cache/lru_cache.h"

#include <gtest/gtest.h>

#include <functional>
#include <list>
#include <memory>
#include <thread>
#include <vector>

#include "util/random.h"

namespace lethe {
namespace {

// The LRU order of a one-shard cache, kept as a list, most recent first.
class Model {
 public:
  Model(size_t capacity, size_t keep) : capacity_(capacity), keep_(keep) {}
  struct Entry {
    CacheKey key;
    int value;
    size_t charge;
  };
  const Entry* Lookup(const CacheKey& k) {
    auto it = FindKey(k);
    if (it == entries_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, it);
    return &entries_.front();
  }
  void Insert(const CacheKey& k, int v, size_t charge) {
    Erase(k);
    entries_.push_front(Entry{k, v, charge});
    usage_ += charge;
    Evict();
  }
  void Erase(const CacheKey& k) {
    auto it = FindKey(k);
    if (it == entries_.end()) return;
    usage_ -= it->charge;
    entries_.erase(it);
  }
  void EraseIf(const std::function<bool(const CacheKey&)>& pred) {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (pred(it->key)) {
        usage_ -= it->charge;
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Returns the charge evicted.
  size_t SetReserved(size_t r) {
    bool grew = r > reserved_;
    reserved_ = r;
    const size_t before = usage_;
    if (grew) Evict();
    return before - usage_;
  }
  size_t usage() const { return usage_; }

 private:
  std::list<Entry>::iterator FindKey(const CacheKey& k) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->key == k) return it;
    }
    return entries_.end();
  }
  // The cache's shard capacity with one shard.
  void Evict() {
    const size_t cap = capacity_ - std::min(reserved_, capacity_) + 1;
    while (usage_ > cap && entries_.size() > keep_) {
      usage_ -= entries_.back().charge;
      entries_.pop_back();
    }
  }
  const size_t capacity_, keep_;
  size_t reserved_ = 0, usage_ = 0;
  std::list<Entry> entries_;
};

void RunAgainstModel(bool keep_newest, uint64_t seed) {
  SCOPED_TRACE(testing::Message() << "seed " << seed << " keep_newest " << keep_newest);
  constexpr size_t kCapacity = 1000;
  LruCache<int, 1> cache(kCapacity, keep_newest);
  Model model(kCapacity, keep_newest ? 1 : 0);
  Random rnd(seed);
  // Few keys, so that inserts replace, lookups hit and evictions are common;
  // keys with equal lo and different hi tell the two halves apart.
  auto key = [&] { return CacheKey{rnd.Uniform(4), rnd.Uniform(40)}; };
  for (int op = 0; op < 20000; op++) {
    const uint64_t what = rnd.Uniform(100);
    if (what < 45) {
      CacheKey k = key();
      if (what < 15) cache.Prefetch(k);  // changes nothing a lookup sees
      std::shared_ptr<int> got = cache.Lookup(k);
      const Model::Entry* want = model.Lookup(k);
      ASSERT_EQ(got != nullptr, want != nullptr) << "op " << op;
      if (want != nullptr) {
        ASSERT_EQ(*got, want->value) << "op " << op;
      }
    } else if (what < 85) {
      CacheKey k = key();
      const int v = static_cast<int>(rnd.Next() & 0xffff);
      const size_t charge = rnd.OneIn(50) ? 1500 : 1 + rnd.Uniform(120);  // sometimes over capacity
      cache.Insert(k, std::make_shared<int>(v), charge);
      model.Insert(k, v, charge);
    } else if (what < 93) {
      CacheKey k = key();
      cache.Erase(k);
      model.Erase(k);
    } else if (what < 95) {
      const uint64_t hi = rnd.Uniform(4);
      cache.EraseIf([hi](const CacheKey& k) { return k.hi == hi; });
      model.EraseIf([hi](const CacheKey& k) { return k.hi == hi; });
    } else {
      const size_t r = rnd.Uniform(kCapacity + 200);
      ASSERT_EQ(cache.SetReserved(r), model.SetReserved(r)) << "op " << op;
    }
    ASSERT_EQ(cache.usage(), model.usage()) << "op " << op;
  }
}

TEST(LruCacheTest, MatchesAnLruModel) {
  for (uint64_t seed = 1; seed <= 8; seed++) {
    RunAgainstModel(true, seed);
    RunAgainstModel(false, seed);
  }
}

TEST(LruCacheTest, CountsHitsAndMisses) {
  LruCache<int> cache(1 << 20);
  cache.Insert(CacheKey{1, 2}, std::make_shared<int>(7), 10);
  cache.Prefetch(CacheKey{1, 2});  // not a lookup
  cache.Prefetch(CacheKey{2, 1});
  EXPECT_EQ(*cache.Lookup(CacheKey{1, 2}), 7);
  EXPECT_EQ(cache.Lookup(CacheKey{2, 1}), nullptr);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 1u);
}

TEST(LruCacheTest, GrowsItsBucketsAndFindsEveryEntry) {
  LruCache<int, 2> cache(1 << 30);
  for (int i = 0; i < 5000; i++) cache.Insert(CacheKey{7, static_cast<uint64_t>(i)}, std::make_shared<int>(i), 1);
  EXPECT_EQ(cache.usage(), 5000u);
  for (int i = 0; i < 5000; i++) {
    std::shared_ptr<int> v = cache.Lookup(CacheKey{7, static_cast<uint64_t>(i)});
    ASSERT_NE(v, nullptr) << i;
    EXPECT_EQ(*v, i);
  }
}

TEST(LruCacheTest, AnEvictedValueLivesWhileHeld) {
  LruCache<int, 1> cache(100, /*keep_newest=*/false);
  cache.Insert(CacheKey{0, 1}, std::make_shared<int>(1), 60);
  std::shared_ptr<int> held = cache.Lookup(CacheKey{0, 1});
  cache.Insert(CacheKey{0, 2}, std::make_shared<int>(2), 60);  // evicts key 1
  EXPECT_EQ(cache.Lookup(CacheKey{0, 1}), nullptr);
  EXPECT_EQ(*held, 1);
  EXPECT_EQ(held.use_count(), 1);
}

// A value whose destructor uses the cache: values die outside its locks.
struct CallsBack {
  LruCache<CallsBack, 1>* cache;
  ~CallsBack() { cache->Lookup(CacheKey{9, 9}); }
};

TEST(LruCacheTest, ValuesAreDestroyedOutsideTheLock) {
  LruCache<CallsBack, 1> cache(10, /*keep_newest=*/false);
  cache.Insert(CacheKey{0, 1}, std::make_shared<CallsBack>(CallsBack{&cache}), 8);
  cache.Insert(CacheKey{0, 2}, std::make_shared<CallsBack>(CallsBack{&cache}), 8);  // evicts
  cache.Erase(CacheKey{0, 2});
  cache.Insert(CacheKey{0, 3}, std::make_shared<CallsBack>(CallsBack{&cache}), 4);
  cache.EraseIf([](const CacheKey&) { return true; });
  cache.Insert(CacheKey{0, 4}, std::make_shared<CallsBack>(CallsBack{&cache}), 4);
  cache.SetReserved(10);
  EXPECT_EQ(cache.usage(), 0u);
}

// Prefetch runs without a lock beside inserts that grow the buckets and
// erases that free entries (the sanitizer builds check it reads no freed
// memory and races with nothing).
TEST(LruCacheTest, ConcurrentUseKeepsTheAccounting) {
  constexpr size_t kCapacity = 64 * 1024;
  LruCache<int> cache(kCapacity);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&cache, t] {
      Random rnd(100 + t);
      for (int op = 0; op < 20000; op++) {
        CacheKey k{rnd.Uniform(3), rnd.Uniform(2000)};
        switch (rnd.Uniform(4)) {
          case 0:
            cache.Prefetch(k);
            [[fallthrough]];
          case 1:
            if (auto v = cache.Lookup(k)) {
              ASSERT_EQ(*v, static_cast<int>(k.lo));
            }
            break;
          case 2:
            cache.Insert(k, std::make_shared<int>(static_cast<int>(k.lo)), 1 + rnd.Uniform(100));
            break;
          default:
            cache.Erase(k);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  // Each shard may exceed its share by its newest entry (at most 100).
  EXPECT_LE(cache.usage(), kCapacity + 16 * (100 + 1));
  cache.EraseIf([](const CacheKey&) { return true; });
  EXPECT_EQ(cache.usage(), 0u);
}

}  // namespace
}  // namespace lethe
