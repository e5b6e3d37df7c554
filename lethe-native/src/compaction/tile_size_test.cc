#include "compaction/tile_size.h"

#include <gtest/gtest.h>

namespace lethe {
namespace {

TEST(AutoTileSizeTest, ALargeTreeWithFewShortScansTakesLargeTiles) {
  // 400 GB in 4 KB pages, 50 M point lookups and 10 K short range
  // lookups between two range deletes, FPR 0.02, four levels: h of about 93.
  int h = AutoTileSize(100'000'000, 50'000'000, 10'000, 1, 0.02, 4);
  EXPECT_GE(h, 90);
  EXPECT_LE(h, 100);
}

TEST(AutoTileSizeTest, FollowsTheWorkload) {
  EXPECT_EQ(1, AutoTileSize(1'000'000, 1000, 0, 0, 0.01, 3));  // no secondary deletes: classic layout
  // Frequent secondary deletes, few lookups: the largest tiles.
  EXPECT_EQ(kMaxAutoTileSize, AutoTileSize(1'000'000, 0, 0, 10, 0.01, 3));
  // More lookups per secondary delete: smaller tiles, down to 1.
  int many = AutoTileSize(100'000, 10'000'000, 0, 10, 0.01, 3);
  int more = AutoTileSize(100'000, 100'000'000, 0, 10, 0.01, 3);
  EXPECT_GT(many, more);
  EXPECT_EQ(1, AutoTileSize(100, 100'000'000, 1'000'000, 1, 0.01, 3));
  // Range lookups cost L pages per extra tile page.
  EXPECT_LT(AutoTileSize(100'000, 0, 10'000, 1, 0.01, 5), AutoTileSize(100'000, 0, 10'000, 1, 0.01, 1));
}

TEST(AutoTileSizeTest, BloomRate) {
  EXPECT_NEAR(0.0082, BloomFalsePositiveRate(10), 0.0005);
  EXPECT_EQ(1.0, BloomFalsePositiveRate(0));
}

}  // namespace
}  // namespace lethe
