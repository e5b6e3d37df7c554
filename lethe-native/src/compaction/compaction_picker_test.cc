#include "compaction/compaction_picker.h"

#include <gtest/gtest.h>

#include "test_files.h"

#include "compaction/level_targets.h"

namespace lethe {
namespace {

// Static level targets (the default; level_targets.h).
ColumnFamilyOptions StaticOptions() {
  ColumnFamilyOptions o;
  o.dynamic_level_bytes = false;
  return o;
}

TEST(CompactionPickerTest, NothingWhenWithinBudget) {
  ColumnFamilyFiles files;
  ColumnFamilyOptions o = StaticOptions();
  files.levels[0] = {TestFile(1, "a", "z", 100)};
  files.levels[1] = {TestFile(2, "a", "m", 1000)};
  EXPECT_FALSE(PickCompaction(files, o, CompactionPointers(), 0, kMaxSequenceNumber).has_value());
}

TEST(CompactionPickerTest, LevelZeroTakesAllFilesAndOverlaps) {
  ColumnFamilyFiles files;
  ColumnFamilyOptions o = StaticOptions();
  o.level0_compaction_trigger = 2;
  files.levels[0] = {TestFile(4, "c", "e", 10, 4), TestFile(3, "a", "b", 10, 3)};
  files.levels[1] = {TestFile(1, "a", "a", 10), TestFile(2, "d", "d", 10), TestFile(5, "x", "y", 10)};
  auto plan = PickCompaction(files, o, CompactionPointers(), 0, kMaxSequenceNumber);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->level, 0);
  EXPECT_EQ(plan->reason, CompactionReason::kLevel0);
  EXPECT_EQ(plan->inputs[0].size(), 2u);
  ASSERT_EQ(plan->inputs[1].size(), 2u);
  EXPECT_EQ(plan->inputs[1][0]->number, 1u);
  EXPECT_EQ(plan->inputs[1][1]->number, 2u);
}

TEST(CompactionPickerTest, SaturatedLevelRoundRobin) {
  ColumnFamilyFiles files;
  ColumnFamilyOptions o = StaticOptions();
  o.level1_bytes = 100;
  o.size_ratio = 10;
  files.levels[1] = {TestFile(1, "a", "c", 60), TestFile(2, "d", "f", 60), TestFile(3, "g", "i", 60)};
  files.levels[2] = {TestFile(4, "e", "h", 10)};
  EXPECT_EQ(ComputeLevelTargets(files, o).max_bytes[2], 1000u);
  CompactionPointers p;
  auto plan = PickCompaction(files, o, p, 0, kMaxSequenceNumber);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->reason, CompactionReason::kSaturation);
  EXPECT_EQ(plan->inputs[0][0]->number, 1u);
  EXPECT_TRUE(plan->IsTrivialMove());
  p.after[1] = "c";
  plan = PickCompaction(files, o, p, 0, kMaxSequenceNumber);
  EXPECT_EQ(plan->inputs[0][0]->number, 2u);
  ASSERT_EQ(plan->inputs[1].size(), 1u);
  EXPECT_FALSE(plan->IsTrivialMove());
  p.after[1] = "i";  // wraps around
  plan = PickCompaction(files, o, p, 0, kMaxSequenceNumber);
  EXPECT_EQ(plan->inputs[0][0]->number, 1u);
}

// Dynamic level targets on a base of 100 bytes.
ColumnFamilyOptions DynamicOptions() {
  ColumnFamilyOptions o;
  o.dynamic_level_bytes = true;
  o.level1_bytes = 100;
  o.size_ratio = 10;
  o.level0_compaction_trigger = 2;
  return o;
}

TEST(CompactionPickerTest, DynamicTargetsSendLevelZeroToTheBaseLevel) {
  ColumnFamilyFiles files;
  ColumnFamilyOptions o = DynamicOptions();
  files.levels[0] = {TestFile(9, "b", "c", 10, 9), TestFile(8, "a", "b", 10, 8)};
  files.levels[6] = {TestFile(1, "a", "m", 5000), TestFile(2, "n", "z", 5000)};  // base: level 4, target 100
  auto plan = PickCompaction(files, o, CompactionPointers(), 0, kMaxSequenceNumber);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->level, 0);
  EXPECT_EQ(plan->output_level, 4);
  EXPECT_TRUE(plan->inputs[1].empty());
}

TEST(CompactionPickerTest, DynamicTargetsDrainLevelsAboveTheBaseFirst) {
  ColumnFamilyFiles files;
  ColumnFamilyOptions o = DynamicOptions();
  files.levels[0] = {TestFile(9, "b", "c", 10, 9), TestFile(8, "a", "b", 10, 8), TestFile(7, "a", "b", 10, 7)};
  files.levels[2] = {TestFile(3, "a", "c", 20, 3)};  // small, but above the base (level 4)
  files.levels[6] = {TestFile(1, "a", "m", 5000), TestFile(2, "n", "z", 5000)};
  auto plan = PickCompaction(files, o, CompactionPointers(), 0, kMaxSequenceNumber);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->level, 2);
  EXPECT_EQ(plan->output_level, 3);
  EXPECT_TRUE(plan->IsTrivialMove());
  // Level 0 may not pass level 2's older data: it goes there while level 2 drains.
  files.levels[2].clear();
  files.levels[3] = {TestFile(3, "a", "c", 20, 3)};
  EXPECT_EQ(ComputeLevelTargets(files, o).level0_output, 3);
  files.levels[3].clear();
  EXPECT_EQ(ComputeLevelTargets(files, o).level0_output, 4);
}

}  // namespace
}  // namespace lethe
