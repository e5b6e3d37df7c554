#include "compaction/level_targets.h"

#include <gtest/gtest.h>

#include "test_files.h"

namespace lethe {
namespace {

ColumnFamilyOptions Options(bool dynamic) {
  ColumnFamilyOptions o;
  o.dynamic_level_bytes = dynamic;
  o.level1_bytes = 100;
  o.size_ratio = 10;
  return o;
}

TEST(LevelTargetsTest, StaticTargetsGrowFromLevelOne) {
  ColumnFamilyFiles files;
  files.levels[6] = {TestFile(1, "a", "z", 1'000'000)};
  LevelTargets t = ComputeLevelTargets(files, Options(false));
  EXPECT_EQ(t.base_level, 1);
  EXPECT_EQ(t.level0_output, 1);
  EXPECT_EQ(t.max_bytes[1], 100u);
  EXPECT_EQ(t.max_bytes[3], 10'000u);
  EXPECT_EQ(t.max_bytes[5], 1'000'000u);
  EXPECT_EQ(t.max_bytes[6], 0u);
}

TEST(LevelTargetsTest, AnEmptyOrSmallTreeCompactsLevelZeroIntoTheLastLevel) {
  ColumnFamilyFiles files;
  LevelTargets t = ComputeLevelTargets(files, Options(true));
  EXPECT_EQ(t.base_level, 6);
  EXPECT_EQ(t.level0_output, 6);
  files.levels[6] = {TestFile(1, "a", "z", 100)};
  t = ComputeLevelTargets(files, Options(true));
  EXPECT_EQ(t.base_level, 6);
  for (uint64_t bytes : t.max_bytes) EXPECT_EQ(bytes, 0u);
}

TEST(LevelTargetsTest, TargetsFollowTheLargestLevelAndTheBaseMovesUpAsItGrows) {
  ColumnFamilyFiles files;
  files.levels[6] = {TestFile(1, "a", "z", 101)};
  LevelTargets t = ComputeLevelTargets(files, Options(true));
  EXPECT_EQ(t.base_level, 5);
  EXPECT_EQ(t.max_bytes[5], 10u);
  files.levels[6] = {TestFile(1, "a", "z", 654'321)};
  t = ComputeLevelTargets(files, Options(true));
  // 654,321 / 10^4 = 65 is the first target within (10, 100]: level 2.
  EXPECT_EQ(t.base_level, 2);
  EXPECT_EQ(t.level0_output, 2);
  EXPECT_EQ(t.max_bytes[1], 0u);
  EXPECT_EQ(t.max_bytes[2], 65u);
  EXPECT_EQ(t.max_bytes[3], 654u);
  EXPECT_EQ(t.max_bytes[5], 65'432u);
  EXPECT_EQ(t.max_bytes[6], 0u);
  EXPECT_FALSE(t.Draining(2));
  EXPECT_TRUE(t.Draining(1));
}

TEST(LevelTargetsTest, LevelsAboveTheBaseDrainAndLevelZeroStaysAboveTheirData) {
  // A tree laid out by static targets: most data one level above the last
  // non-empty one, nothing in levels 4 to 6.
  ColumnFamilyFiles files;
  files.levels[1] = {TestFile(1, "a", "z", 90)};
  files.levels[2] = {TestFile(2, "a", "z", 900)};
  files.levels[3] = {TestFile(3, "a", "z", 9'000)};
  LevelTargets t = ComputeLevelTargets(files, Options(true));
  EXPECT_EQ(t.base_level, 4);  // 9,000 / 100 = 90
  EXPECT_EQ(t.level0_output, 1);
  EXPECT_TRUE(t.Draining(1));
  EXPECT_TRUE(t.Draining(3));
  EXPECT_FALSE(t.Draining(4));
}

}  // namespace
}  // namespace lethe
