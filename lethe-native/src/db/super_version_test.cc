#include "db/super_version.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <unordered_map>
#include <vector>

namespace lethe {
namespace {

std::shared_ptr<const SuperVersion> NewSuperVersion() {
  auto sv = std::make_shared<SuperVersion>();
  sv->mem = std::make_shared<MemTable>();
  return sv;
}

TEST(SuperVersionCacheTest, ReadersGetTheLatestAndCount) {
  SuperVersionCache cache;
  auto first = NewSuperVersion(), second = NewSuperVersion();
  cache.Install(first);
  EXPECT_EQ(first.get(), cache.Acquire(1, 0).get());
  EXPECT_EQ(first.get(), cache.Acquire(1, 0).get());  // from this thread's slot
  cache.Install(second);
  EXPECT_EQ(second.get(), cache.Acquire(0, 1).get());
  std::thread([&] { EXPECT_EQ(second.get(), cache.Acquire(1, 0).get()); }).join();
  EXPECT_EQ(3u, cache.PointLookups());
  EXPECT_EQ(1u, cache.RangeLookups());
  cache.Clear();
  EXPECT_EQ(nullptr, cache.Acquire(1, 0).get());
}

TEST(SuperVersionCacheTest, AnIdleReaderKeepsNoOldSuperVersion) {
  SuperVersionCache cache;
  auto old_sv = NewSuperVersion();
  cache.Install(old_sv);
  // Another thread reads once and then idles (here: ends).
  std::thread([&] { EXPECT_EQ(old_sv.get(), cache.Acquire(1, 0).get()); }).join();
  EXPECT_EQ(old_sv.get(), cache.Acquire(1, 0).get());
  EXPECT_GT(old_sv.use_count(), 1) << "the slots hold it";
  cache.Install(NewSuperVersion());
  EXPECT_EQ(1, old_sv.use_count()) << "publishing took every idle copy back";
}

TEST(SuperVersionCacheTest, AReadInProgressKeepsItsSuperVersionUntilItEnds) {
  SuperVersionCache cache;
  auto old_sv = NewSuperVersion();
  cache.Install(old_sv);
  {
    SuperVersionCache::Lease lease = cache.Acquire(1, 0);
    cache.Install(NewSuperVersion());
    EXPECT_EQ(old_sv.get(), lease.get());
    EXPECT_GT(old_sv.use_count(), 1) << "still read";
    {
      SuperVersionCache::Lease nested = cache.Acquire(1, 0);  // a read within the read
      EXPECT_NE(old_sv.get(), nested.get());
    }
  }
  EXPECT_EQ(1, old_sv.use_count()) << "the reader gave it up when done";
}

TEST(SuperVersionCacheTest, SharedCopiesOutliveTheLease) {
  SuperVersionCache cache;
  auto sv = NewSuperVersion();
  cache.Install(sv);
  std::shared_ptr<const SuperVersion> shared = cache.Acquire(0, 1).Share();
  cache.Clear();
  sv.reset();
  ASSERT_NE(nullptr, shared);
  EXPECT_NE(nullptr, shared->mem);
}

// A publisher installs super version i, then publishes sequence i (as a
// memtable switch does); what super version i holds was published as i - 1 or
// earlier (as a flush's file). A reader's sequence must lie between the two:
// at least i - 1, or the super version may lack versions the sequence reads
// (a flush keeps only the newest), and at most i, or it may lack what the
// sequence covers. Loading the sequence before taking the super version fails
// the first.
TEST(SuperVersionCacheTest, TheSequenceIsReadWhileItsSuperVersionIsCurrent) {
  constexpr uint64_t kVersions = 5000;
  SuperVersionCache cache;
  std::vector<std::shared_ptr<const SuperVersion>> versions;
  std::unordered_map<const SuperVersion*, uint64_t> number_of;
  for (uint64_t i = 0; i <= kVersions; i++) {
    versions.push_back(std::make_shared<SuperVersion>());
    number_of[versions.back().get()] = i;
  }
  std::atomic<uint64_t> sequence{0};
  cache.Install(versions[0]);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> bad{0}, reads{0};
  auto reader = [&] {
    while (!done.load(std::memory_order_acquire)) {
      uint64_t seq = 0;
      SuperVersionCache::Lease lease = cache.Acquire(1, 0, sequence, &seq);
      const uint64_t n = number_of.at(lease.get());
      if (seq + 1 < n || seq > n) bad.fetch_add(1);
      reads.fetch_add(1);
    }
  };
  std::thread r1(reader), r2(reader);
  uint64_t reads_seen = 0;
  for (uint64_t i = 1; i <= kVersions; i++) {
    cache.Install(versions[i]);
    sequence.store(i, std::memory_order_release);
    // Paced by the readers (a loaded machine may not schedule them at once): they read while it publishes.
    if (i % 16 == 0) {
      while (reads.load() < reads_seen + 2) std::this_thread::yield();
      reads_seen = reads.load();
    }
  }
  done = true;
  r1.join();
  r2.join();
  EXPECT_EQ(0u, bad.load()) << "of " << reads.load() << " reads";
  EXPECT_GE(reads.load(), 2 * kVersions / 16) << "the readers ran alongside the publisher";
}

}  // namespace
}  // namespace lethe
