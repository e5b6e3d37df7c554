#include "memtable/memtable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "util/random.h"

namespace lethe {
namespace {

std::string Lookup(const MemTable& mem, std::string_view key, SequenceNumber seq) {
  GetContext ctx(key, seq);
  mem.Get(&ctx);
  std::string v;
  Status s = ctx.Finish(&v, nullptr);
  return s.ok() ? v : (s.IsNotFound() ? "NOT_FOUND" : s.ToString());
}

// A reader iterating `mem` until `done`, checking that its keys ascend strictly; counts its passes.
std::thread CheckOrderUntil(const MemTable& mem, const std::atomic<bool>& done, std::atomic<uint64_t>& passes) {
  return std::thread([&] {
    while (!done.load()) {
      auto it = mem.NewIterator();
      std::string prev;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        if (!prev.empty()) {
          EXPECT_LT(CompareInternalKey(prev, it->key()), 0);  // not ASSERT: a writer may wait for `passes`
        }
        prev.assign(it->key());
      }
      passes++;
    }
  });
}

TEST(MemTableTest, VersionsAndSnapshots) {
  MemTable mem;
  mem.Add(1, EntryKind::kValue, "k", "v1", kMaxDeleteKey);
  mem.Add(2, EntryKind::kValue, "k", "v2", kMaxDeleteKey);
  mem.Add(3, EntryKind::kTombstone, "k", "", kMaxDeleteKey);
  mem.Add(4, EntryKind::kMerge, "k", "m", kMaxDeleteKey);
  EXPECT_EQ(Lookup(mem, "k", 1), "v1");
  EXPECT_EQ(Lookup(mem, "k", 2), "v2");
  EXPECT_EQ(Lookup(mem, "k", 3), "NOT_FOUND");
  EXPECT_EQ(Lookup(mem, "k", 4), "m");
  EXPECT_EQ(Lookup(mem, "j", 4), "NOT_FOUND");
  EXPECT_EQ(mem.num_entries(), 4u);
  EXPECT_EQ(mem.num_point_tombstones(), 1u);
}

// With a filter (sized from the memtable before it), every version added is
// found, also by a reader running while the entries arrive; absent keys are
// not, also when more keys arrive than the filter was sized for.
TEST(MemTableTest, CountsDistinctKeys) {
  // Versions of a key land next to each other, also across leaves; older
  // sequences come in after newer ones as a compaction in memory adds them.
  for (uint32_t seed = 1; seed <= 20; seed++) {
    Random rnd(seed);
    MemTable mem;
    std::set<std::string> keys;
    const uint32_t spread = 1 + rnd.Uniform(2000);
    std::vector<SequenceNumber> seqs(5000);
    for (size_t i = 0; i < seqs.size(); i++) seqs[i] = i + 1;
    for (size_t i = 1; i < seqs.size(); i++) {
      if (rnd.OneIn(4)) std::swap(seqs[i], seqs[rnd.Uniform(static_cast<uint32_t>(i))]);
    }
    for (int i = 0; i < 5000; i++) {
      const std::string key = "k" + std::to_string(rnd.Uniform(spread));
      mem.Add(seqs[i], EntryKind::kValue, key, "v", 0);
      keys.insert(key);
      ASSERT_EQ(mem.num_keys(), keys.size()) << "seed " << seed << " entry " << i;
    }
    EXPECT_EQ(mem.num_entries(), 5000u);
  }
}

TEST(MemTableTest, FilterHidesNoKeyFromConcurrentReaders) {
  for (size_t expected : {size_t{20000}, size_t{50}}) {
    SCOPED_TRACE("expected keys " + std::to_string(expected));
    MemTable mem(expected);
    std::atomic<int> published{-1};
    std::atomic<bool> done{false};
    std::thread reader([&] {
      Random rnd(3);
      while (!done.load()) {
        const int last = published.load(std::memory_order_acquire);
        if (last < 0) continue;
        const int i = static_cast<int>(rnd.Uniform(static_cast<uint64_t>(last) + 1));
        ASSERT_EQ("v" + std::to_string(i), Lookup(mem, "key" + std::to_string(i), kMaxSequenceNumber)) << i;
      }
    });
    for (int i = 0; i < 20000; i++) {
      mem.Add(static_cast<SequenceNumber>(i + 1), EntryKind::kValue, "key" + std::to_string(i), "v" + std::to_string(i), 0);
      published.store(i, std::memory_order_release);
    }
    done = true;
    reader.join();
    for (int i = 0; i < 20000; i += 7) EXPECT_EQ("v" + std::to_string(i), Lookup(mem, "key" + std::to_string(i), 30000));
    for (int i = 0; i < 2000; i++) EXPECT_EQ("NOT_FOUND", Lookup(mem, "absent" + std::to_string(i), 30000));
    EXPECT_GT(mem.ApproximateMemoryUsage(), 0u);
  }
}

// A memtable filled without a filter (the survivors of a compaction in
// memory) gets one sized for the keys it holds, and it hides none of them.
TEST(MemTableTest, FilterAddedAfterFillingHoldsEveryKey) {
  MemTable mem(0, 4096);
  for (int i = 0; i < 20000; i++) {
    const std::string key = "key" + std::to_string(i);
    mem.Add(static_cast<SequenceNumber>(2 * i + 2), EntryKind::kValue, key, "new" + std::to_string(i), 0);
    if (i % 3 == 0) mem.Add(static_cast<SequenceNumber>(2 * i + 1), EntryKind::kValue, key, "old", 0);
  }
  const size_t before = mem.ApproximateMemoryUsage();
  mem.AddKeyFilter();
  EXPECT_GE(mem.ApproximateMemoryUsage() - before, 20000u * 10 / 8);  // about 10 bits per key
  mem.AddKeyFilter();  // a second call keeps the first filter
  EXPECT_LT(mem.ApproximateMemoryUsage() - before, 20000u * 2);
  for (int i = 0; i < 20000; i++) {
    ASSERT_EQ("new" + std::to_string(i), Lookup(mem, "key" + std::to_string(i), kMaxSequenceNumber)) << i;
  }
  EXPECT_EQ("old", Lookup(mem, "key3", 7));
  for (int i = 0; i < 2000; i++) EXPECT_EQ("NOT_FOUND", Lookup(mem, "absent" + std::to_string(i), kMaxSequenceNumber));
}

TEST(MemTableTest, RangeTombstoneBySequence) {
  MemTable mem;
  mem.Add(1, EntryKind::kValue, "b", "old", kMaxDeleteKey);
  mem.AddRangeTombstone(2, "a", "c");
  mem.Add(3, EntryKind::kValue, "b", "new", kMaxDeleteKey);
  EXPECT_EQ(Lookup(mem, "b", 1), "old");
  EXPECT_EQ(Lookup(mem, "b", 2), "NOT_FOUND");
  EXPECT_EQ(Lookup(mem, "b", 3), "new");
  EXPECT_EQ(Lookup(mem, "c", 3), "NOT_FOUND");
}

TEST(MemTableTest, IteratorOrderAndConcurrentReaders) {
  MemTable mem;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> checks{0};
  std::thread reader = CheckOrderUntil(mem, done, checks);
  for (int i = 0; i < 20000; i++) {
    // Halfway, until the reader has read: on a loaded machine it may not be
    // scheduled before the writes end (the check used to fail then).
    while (i == 10000 && checks.load() == 0) std::this_thread::yield();
    mem.Add(static_cast<SequenceNumber>(i + 1), EntryKind::kValue, "key" + std::to_string(i % 997), "v", i);
  }
  done = true;
  reader.join();
  auto it = mem.NewIterator();
  it->Seek(MakeInternalKey("key5", kMaxSequenceNumber, kSeekKind));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(ExtractSortKey(it->key()), "key5");
}

// Versions of a thousand keys in random order, new keys landing between
// them now and then, and a reader iterating all along: the table holds every
// entry in internal-key order and each key reads as its newest version.
TEST(MemTableTest, VersionsAndNewKeysKeepOrderUnderAConcurrentReader) {
  MemTable mem;
  Random rnd(301);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> checks{0};
  std::thread reader = CheckOrderUntil(mem, done, checks);
  std::vector<std::string> model;  // internal keys
  std::map<std::string, std::string> newest;
  const int kEntries = 60000;
  for (int i = 1; i <= kEntries; i++) {
    while (i == kEntries / 2 && checks.load() == 0) std::this_thread::yield();  // the reader overlaps
    std::string key = rnd.OneIn(20) ? "key" + std::to_string(rnd.Uniform(1000000) * 2 + 1)
                                     : "key" + std::to_string(rnd.Uniform(1000) * 2);
    std::string value = "v" + std::to_string(i);
    mem.Add(i, EntryKind::kValue, key, value, kMaxDeleteKey);
    model.push_back(MakeInternalKey(key, i, EntryKind::kValue));
    newest[key] = value;
  }
  done = true;
  reader.join();
  std::sort(model.begin(), model.end(),
            [](const std::string& a, const std::string& b) { return CompareInternalKey(a, b) < 0; });
  auto it = mem.NewIterator();
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), n++) {
    ASSERT_LT(n, model.size());
    ASSERT_EQ(it->key(), model[n]) << "entry " << n;
  }
  EXPECT_EQ(n, model.size());
  for (const auto& [key, value] : newest) EXPECT_EQ(Lookup(mem, key, kEntries), value) << key;
}

TEST(FragmentedTombstonesTest, OverlapsAreCutIntoFragments) {
  FragmentedTombstones f({{"a", "e", 5}, {"c", "g", 9}, {"x", "y", 1}, {"q", "q", 3}});
  ASSERT_EQ(f.fragments().size(), 4u);  // [a,c) [c,e) [e,g) [x,y); empty [q,q) ignored
  EXPECT_EQ(f.MaxCoveringSeq("b", 100), 5u);
  EXPECT_EQ(f.MaxCoveringSeq("d", 100), 9u);
  EXPECT_EQ(f.MaxCoveringSeq("d", 8), 5u);
  EXPECT_EQ(f.MaxCoveringSeq("d", 4), 0u);
  EXPECT_EQ(f.MaxCoveringSeq("g", 100), 0u);
  EXPECT_EQ(f.MaxCoveringSeq("x", 100), 1u);
  EXPECT_EQ(f.MaxCoveringSeq("q", 100), 0u);
}

}  // namespace
}  // namespace lethe
