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
  EXPECT_EQ(first.get(), cache.Acquire(true).get());
  EXPECT_EQ(first.get(), cache.Acquire(true).get());  // from this thread's slot
  cache.Install(second);
  EXPECT_EQ(second.get(), cache.Acquire(false).get());
  std::thread([&] { EXPECT_EQ(second.get(), cache.Acquire(true).get()); }).join();
  EXPECT_EQ(3u, cache.PointLookups());
  EXPECT_EQ(1u, cache.RangeLookups());
  cache.Clear();
  EXPECT_EQ(nullptr, cache.Acquire(true).get());
}

TEST(SuperVersionCacheTest, AnIdleReaderKeepsNoOldSuperVersion) {
  SuperVersionCache cache;
  auto old_sv = NewSuperVersion();
  cache.Install(old_sv);
  // Another thread reads once and then idles (here: ends).
  std::thread([&] { EXPECT_EQ(old_sv.get(), cache.Acquire(true).get()); }).join();
  EXPECT_EQ(old_sv.get(), cache.Acquire(true).get());
  EXPECT_GT(old_sv.use_count(), 1) << "the slots hold it";
  cache.Install(NewSuperVersion());
  EXPECT_EQ(1, old_sv.use_count()) << "publishing took every idle copy back";
}

TEST(SuperVersionCacheTest, AReadInProgressKeepsItsSuperVersionUntilItEnds) {
  SuperVersionCache cache;
  auto old_sv = NewSuperVersion();
  cache.Install(old_sv);
  {
    SuperVersionCache::Lease lease = cache.Acquire(true);
    cache.Install(NewSuperVersion());
    EXPECT_EQ(old_sv.get(), lease.get());
    EXPECT_GT(old_sv.use_count(), 1) << "still read";
    {
      SuperVersionCache::Lease nested = cache.Acquire(true);  // a read within the read
      EXPECT_NE(old_sv.get(), nested.get());
    }
  }
  EXPECT_EQ(1, old_sv.use_count()) << "the reader gave it up when done";
}

TEST(SuperVersionCacheTest, SharedCopiesOutliveTheLease) {
  SuperVersionCache cache;
  auto sv = NewSuperVersion();
  cache.Install(sv);
  std::shared_ptr<const SuperVersion> shared = cache.Acquire(false).Share();
  cache.Clear();
  sv.reset();
  ASSERT_NE(nullptr, shared);
  EXPECT_NE(nullptr, shared->mem);
}

}  // namespace
}  // namespace lethe
