#include "compaction/compaction_picker.h"

#include <gtest/gtest.h>

namespace lethe {
namespace {

FileRef F(uint64_t n, std::string lo, std::string hi, uint64_t bytes, uint64_t seq = 1) {
  auto f = std::make_shared<FileMetaData>();
  f->number = n;
  f->smallest = std::move(lo);
  f->largest = std::move(hi);
  f->file_size = bytes;
  f->largest_seq = seq;
  return f;
}

TEST(CompactionPickerTest, NothingWhenWithinBudget) {
  ColumnFamilyFiles files;
  ColumnFamilyOptions o;
  files.levels[0] = {F(1, "a", "z", 100)};
  files.levels[1] = {F(2, "a", "m", 1000)};
  EXPECT_FALSE(PickCompaction(files, o, CompactionPointers(), 0, kMaxSequenceNumber).has_value());
}

TEST(CompactionPickerTest, LevelZeroTakesAllFilesAndOverlaps) {
  ColumnFamilyFiles files;
  ColumnFamilyOptions o;
  o.level0_compaction_trigger = 2;
  files.levels[0] = {F(4, "c", "e", 10, 4), F(3, "a", "b", 10, 3)};
  files.levels[1] = {F(1, "a", "a", 10), F(2, "d", "d", 10), F(5, "x", "y", 10)};
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
  ColumnFamilyOptions o;
  o.level1_bytes = 100;
  o.size_ratio = 10;
  files.levels[1] = {F(1, "a", "c", 60), F(2, "d", "f", 60), F(3, "g", "i", 60)};
  files.levels[2] = {F(4, "e", "h", 10)};
  EXPECT_EQ(MaxBytesForLevel(o, 2), 1000u);
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

}  // namespace
}  // namespace lethe
