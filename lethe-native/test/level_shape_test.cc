// The shape a tree settles into under uniform overwrites of a fixed key set,
// the common case of keyed state: with dynamic level targets the last level
// holds the data once and the levels above it a small share, so the files
// take little more than the live data (measured by compacting everything into
// one copy afterwards). With static targets the same workload keeps a much
// larger share above the last level; the control run shows it, or the test
// could not fail. (Which of the two takes more bytes in total depends on how
// the background compactions interleave with the writes at this small size;
// the benchmarks in docs/configuration.md measure that at scale.)
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

#include "lethe/db.h"
#include "lethe/env.h"
#include "lethe/statistics.h"
#include "util/random.h"
#include "version/file_metadata.h"

namespace lethe {
namespace {

constexpr int kKeys = 30000;

struct Shape {
  uint64_t total = 0;  // bytes of every level's files
  uint64_t last = 0;   // bytes of the deepest non-empty level
  int last_level = 0;
  uint64_t live = 0;   // bytes of the files once everything is compacted into one copy
};

uint64_t TotalBytes(DB* db, Shape* shape) {
  const DbStatistics stats = db->GetStatistics();
  uint64_t total = 0;
  for (const LevelStatistics& l : stats.column_families[0].levels) {
    total += l.bytes;
    if (shape != nullptr && l.bytes > 0) {
      shape->last = l.bytes;
      shape->last_level = l.level;
    }
  }
  return total;
}

Shape SettleAfterOverwrites(bool dynamic) {
  std::unique_ptr<Env> env = NewMemEnv();
  Options options;
  options.env = env.get();
  options.use_wal = false;
  options.write_buffer_size = 64 << 10;
  options.cf_defaults.page_size = 1024;
  options.cf_defaults.size_ratio = 4;
  options.cf_defaults.level1_bytes = 128 << 10;
  options.cf_defaults.target_file_size = 32 << 10;
  options.cf_defaults.compression = Compression::kNone;
  options.cf_defaults.dynamic_level_bytes = dynamic;
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::Open(options, "/db", &db).ok());
  Random rnd(7);
  std::string value(100, 'v');
  auto put = [&](uint64_t i) {
    char key[16];
    std::snprintf(key, sizeof(key), "k%08llu", static_cast<unsigned long long>(i));
    value[i % value.size()] = static_cast<char>('a' + rnd.Uniform(26));
    EXPECT_TRUE(db->Put(WriteOptions(), db->DefaultColumnFamily(), key, value).ok());
  };
  for (uint64_t i = 0; i < kKeys; i++) put(i);
  for (int i = 0; i < 4 * kKeys; i++) put(rnd.Uniform(kKeys));
  EXPECT_TRUE(db->Flush().ok());
  EXPECT_TRUE(db->WaitForBackgroundWork().ok());
  Shape shape;
  shape.total = TotalBytes(db.get(), &shape);
  EXPECT_TRUE(db->CompactAll().ok());
  shape.live = TotalBytes(db.get(), nullptr);
  return shape;
}

TEST(LevelShapeTest, DynamicTargetsKeepTheFilesCloseToTheLiveData) {
  const Shape dynamic = SettleAfterOverwrites(true);
  const Shape fixed = SettleAfterOverwrites(false);
  auto ratio = [](uint64_t a, uint64_t b) { return static_cast<double>(a) / static_cast<double>(b); };
  std::printf("files / live data: dynamic %.2f, static %.2f; files / last level: dynamic %.2f (level %d), "
              "static %.2f (level %d)\n",
              ratio(dynamic.total, dynamic.live), ratio(fixed.total, fixed.live), ratio(dynamic.total, dynamic.last),
              dynamic.last_level, ratio(fixed.total, fixed.last), fixed.last_level);
  EXPECT_EQ(dynamic.last_level, kNumLevels - 1);
  // 1 + 1/T + 1/T^2 and level 0 at most: about 1.33 with T = 4.
  EXPECT_LT(ratio(dynamic.total, dynamic.live), 1.45);
  EXPECT_LT(ratio(dynamic.total, dynamic.last), 1.45);
  EXPECT_GT(ratio(fixed.total, fixed.last), ratio(dynamic.total, dynamic.last) + 0.2);
}

}  // namespace
}  // namespace lethe
