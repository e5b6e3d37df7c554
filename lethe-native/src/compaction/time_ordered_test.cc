#include "compaction/time_ordered.h"

#include <gtest/gtest.h>

#include <vector>

#include "test_files.h"
#include "util/random.h"

namespace lethe {
namespace {

ColumnFamilyOptions TimeOrdered() {
  ColumnFamilyOptions o;
  o.compaction_style = CompactionStyle::kTimeOrdered;
  o.level1_bytes = 100;  // files below 100 bytes are young
  o.level0_compaction_trigger = 3;
  o.level0_stop_writes_trigger = 5;
  o.time_ordered_max_files = 8;
  return o;
}

// Level 0 of files with the given sizes, newest first (numbers and sequences
// descending).
ColumnFamilyFiles Level0(const std::vector<uint64_t>& sizes) {
  ColumnFamilyFiles files;
  uint64_t n = sizes.size();
  for (uint64_t bytes : sizes) {
    files.levels[0].push_back(TestFile(n, "a", "z", bytes, n * 10));
    n--;
  }
  return files;
}

// Changes level-0 file `pos` (records are immutable once shared).
template <typename Fn>
void Edit(ColumnFamilyFiles* files, size_t pos, Fn&& fn) {
  auto f = std::make_shared<FileMetaData>(*files->levels[0][pos]);
  fn(*f);
  files->levels[0][pos] = f;
}

std::vector<uint64_t> Numbers(const CompactionPlan& plan) {
  std::vector<uint64_t> out;
  for (const FileRef& f : plan.inputs[0]) out.push_back(f->number);
  return out;
}

std::optional<CompactionPlan> Pick(const ColumnFamilyFiles& files, const ColumnFamilyOptions& o,
                                   uint64_t now_us = 0) {
  EXPECT_TRUE(TimeOrderedActive(files, o));
  return PickCompaction(files, o, CompactionPointers(), now_us, kMaxSequenceNumber);
}

TEST(TimeOrderedTest, LargeFilesAreNeverMerged) {
  // Leveled compaction would merge these four into level 1.
  EXPECT_FALSE(Pick(Level0({500, 400, 100, 900}), TimeOrdered()).has_value());
}

TEST(TimeOrderedTest, YoungNeighboursMergeIntoOneLevelZeroFile) {
  // Positions: 0 young, 1 old, 2-4 young, 5 old. Two young neighbours at the
  // front are too few; the run of three is merged.
  auto files = Level0({10, 500, 20, 30, 40, 600});
  auto plan = Pick(files, TimeOrdered());
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->level, 0);
  EXPECT_EQ(plan->output_level, 0);
  EXPECT_EQ(plan->reason, CompactionReason::kLevel0);
  EXPECT_TRUE(plan->inputs[1].empty());
  EXPECT_FALSE(plan->IsTrivialMove());
  EXPECT_EQ(Numbers(*plan), (std::vector<uint64_t>{4, 3, 2}));
}

TEST(TimeOrderedTest, YoungFilesApartAreNotMerged) {
  // Three young files, but never three neighbours: merging across the large
  // ones would put older versions in front of newer ones.
  EXPECT_FALSE(Pick(Level0({10, 20, 500, 30, 600}), TimeOrdered()).has_value());
}

TEST(TimeOrderedTest, TooManyFilesMergeTheSmallestNeighbours) {
  auto files = Level0({300, 200, 900, 150, 120, 800, 700, 400});
  auto plan = Pick(files, TimeOrdered());
  ASSERT_TRUE(plan.has_value());
  // 150 + 120 is the smallest sum of two neighbours (positions 3 and 4).
  EXPECT_EQ(Numbers(*plan), (std::vector<uint64_t>{5, 4}));
  EXPECT_EQ(plan->output_level, 0);
}

TEST(TimeOrderedTest, TombstonesPastTheBudgetTakeEveryOlderFile) {
  ColumnFamilyOptions o = TimeOrdered();
  o.delete_persistence_threshold_us = 1000;  // D' = 900
  auto files = Level0({500, 400, 300, 200});
  Edit(&files, 1, [](FileMetaData& f) {
    f.num_point_tombstones = 1;
    f.oldest_tombstone_time_us = 100;
  });
  EXPECT_FALSE(Pick(files, o, 999).has_value());  // due at 100 + 900
  auto plan = Pick(files, o, 1000);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->reason, CompactionReason::kDeleteDriven);
  EXPECT_EQ(Numbers(*plan), (std::vector<uint64_t>{3, 2, 1}));
  EXPECT_GE(plan->score, 1e9);  // outranks every other compaction
  // A snapshot older than the file's newest entry would keep the tombstones.
  EXPECT_FALSE(PickCompaction(files, o, CompactionPointers(), 1000, 25).has_value());
}

TEST(TimeOrderedTest, TombstonesUnderTheHorizonRewriteTheFileAlone) {
  ColumnFamilyOptions o = TimeOrdered();
  o.delete_persistence_threshold_us = 1000;
  auto files = Level0({500, 400, 300, 200});
  Edit(&files, 1, [](FileMetaData& f) {
    f.num_point_tombstones = 3;
    f.oldest_tombstone_time_us = 100;
    f.tombstone_delete_key_max = 41;  // clears of windows ending at 41 and before
  });
  files.secondary.horizons.push_back({50, 41, 100});  // delete keys < 41 are gone: not all
  auto plan = Pick(files, o, 1000);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(Numbers(*plan), (std::vector<uint64_t>{3, 2, 1}));
  files.secondary.horizons.push_back({60, 42, 200});  // now every tombstone is under it
  plan = Pick(files, o, 1000);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->reason, CompactionReason::kDeleteDriven);
  EXPECT_EQ(Numbers(*plan), (std::vector<uint64_t>{3}));
}

TEST(TimeOrderedTest, SecondaryDeletesAloneRewriteTheFile) {
  ColumnFamilyOptions o = TimeOrdered();
  o.delete_persistence_threshold_us = 1000;
  auto files = Level0({500, 400, 300});
  Edit(&files, 1, [](FileMetaData& f) {
    f.delete_key_min = 5;
    f.delete_key_max = 50;
    f.smallest_seq = 15;
  });
  // A range record over delete keys [10, 20], made at time 100 with sequence 40.
  files.secondary.ranges.push_back({40, 10, 20, 100});
  auto plan = Pick(files, o, 1000);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->reason, CompactionReason::kDeleteDriven);
  EXPECT_EQ(Numbers(*plan), (std::vector<uint64_t>{2}));
  EXPECT_EQ(plan->output_level, 0);
}

TEST(TimeOrderedTest, StallsOnlyWhereThePickerHasAMerge) {
  ColumnFamilyOptions o = TimeOrdered();
  // Young files apart, as checkpoints cut small flushes between full ones:
  // nothing to merge yet, so no stall either (it would never end).
  EXPECT_FALSE(Pick(Level0({10, 500, 20, 600, 30, 700, 40}), o).has_value());
  EXPECT_FALSE(Level0Stalls(Level0({10, 500, 20, 600, 30, 700, 40}), o));
  // Past time_ordered_max_files (8) plus the stop trigger (5): stall, and a merge is due.
  EXPECT_FALSE(Level0Stalls(Level0(std::vector<uint64_t>(12, 500)), o));
  EXPECT_TRUE(Level0Stalls(Level0(std::vector<uint64_t>(13, 500)), o));
  EXPECT_TRUE(Pick(Level0(std::vector<uint64_t>(13, 500)), o).has_value());
  // Leveled: every level-0 file counts.
  o.compaction_style = CompactionStyle::kLeveled;
  EXPECT_FALSE(Level0Stalls(Level0({500, 500, 500, 500}), o));
  EXPECT_TRUE(Level0Stalls(Level0({500, 500, 500, 500, 500}), o));
}

// Writes that stall wait for a compaction: whenever level 0 stalls, the
// picker must offer one, whatever the mix of sizes.
TEST(TimeOrderedTest, EveryStallHasAMergeToEndIt) {
  ColumnFamilyOptions o = TimeOrdered();
  Random rnd(301);
  for (int round = 0; round < 2000; round++) {
    std::vector<uint64_t> sizes(rnd.Uniform(24));
    for (uint64_t& s : sizes) s = rnd.OneIn(2) ? 1 + rnd.Uniform(99) : 100 + rnd.Uniform(900);
    const ColumnFamilyFiles files = Level0(sizes);
    if (Level0Stalls(files, o)) {
      EXPECT_TRUE(Pick(files, o).has_value()) << "a stall without a merge, " << sizes.size() << " files";
    }
  }
}

TEST(TimeOrderedTest, FilesBelowLevelZeroFallBackToLeveled) {
  auto files = Level0({500, 400, 300});
  files.levels[1] = {TestFile(9, "a", "z", 50)};
  ColumnFamilyOptions o = TimeOrdered();
  EXPECT_FALSE(TimeOrderedActive(files, o));
  auto plan = PickCompaction(files, o, CompactionPointers(), 0, kMaxSequenceNumber);
  ASSERT_TRUE(plan.has_value());  // leveled: three level-0 files reach the trigger
  EXPECT_EQ(plan->output_level, 1);
}

}  // namespace
}  // namespace lethe
