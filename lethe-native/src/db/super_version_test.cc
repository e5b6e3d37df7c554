#include "db/super_version.h"

#include <gtest/gtest.h>

#include <thread>

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

}  // namespace
}  // namespace lethe
