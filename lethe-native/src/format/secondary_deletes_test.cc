// SecondaryDeletes::FateOf: the one rule flush, compaction and page rewrites
// apply to a stored entry.
#include "format/secondary_deletes.h"

#include <gtest/gtest.h>

namespace lethe {
namespace {

// Horizon 100 at sequence 10, then a delete-key range [200, 300] at 20.
SecondaryDeletes Records() {
  SecondaryDeletes sd;
  sd.horizons.push_back(HorizonRecord{10, 100, 1});
  sd.ranges.push_back(DeleteKeyRangeRecord{20, 200, 300, 2});
  return sd;
}

constexpr SequenceNumber kNow = kMaxSequenceNumber;  // no snapshot above the entry

TEST(EntryFateTest, AValueUnderTheHorizonIsDroppedForEveryReader) {
  const EntryFate f = Records().FateOf(5, EntryKind::kValue, 50, kNow);
  EXPECT_EQ(EntryFate::kDrop, f.action);
  EXPECT_FALSE(f.pinned);
}

TEST(EntryFateTest, AValueUnderARangeBecomesATombstone) {
  // Older versions of its key may have delete keys outside the range.
  EXPECT_EQ(EntryFate::kTombstone, Records().FateOf(15, EntryKind::kMerge, 250, kNow).action);
}

TEST(EntryFateTest, ARangeLeavesEntriesWrittenAfterItAlone) {
  EXPECT_EQ(EntryFate::kKeep, Records().FateOf(25, EntryKind::kValue, 250, kNow).action);
}

TEST(EntryFateTest, ASnapshotBeforeTheRecordPinsTheEntry) {
  const EntryFate f = Records().FateOf(5, EntryKind::kValue, 50, /*first_reader=*/8);
  EXPECT_EQ(EntryFate::kKeep, f.action);
  EXPECT_TRUE(f.pinned);
  // A snapshot at or after the record sees it hidden as well.
  EXPECT_EQ(EntryFate::kDrop, Records().FateOf(5, EntryKind::kValue, 50, 10).action);
}

TEST(EntryFateTest, TombstonesLeaveOnlyUnderAHorizon) {
  EXPECT_EQ(EntryFate::kDrop, Records().FateOf(5, EntryKind::kTombstone, 50, kNow).action);
  EXPECT_EQ(EntryFate::kKeep, Records().FateOf(15, EntryKind::kTombstone, 250, kNow).action);
  EXPECT_EQ(EntryFate::kKeep, Records().FateOf(5, EntryKind::kTombstone, kMaxDeleteKey, kNow).action);
}

TEST(EntryFateTest, NoRecordsKeepEverything) {
  const EntryFate f = SecondaryDeletes().FateOf(5, EntryKind::kValue, 1, kNow);
  EXPECT_EQ(EntryFate::kKeep, f.action);
  EXPECT_FALSE(f.pinned);
}

TEST(EntryFateTest, AnySnapshotInIsHalfOpen) {
  const std::multiset<SequenceNumber> snapshots = {10, 20};
  EXPECT_TRUE(AnySnapshotIn(snapshots, 10, 11));
  EXPECT_FALSE(AnySnapshotIn(snapshots, 11, 20));
  EXPECT_TRUE(AnySnapshotIn(snapshots, 11, 21));
  EXPECT_FALSE(AnySnapshotIn(snapshots, 21, kMaxSequenceNumber));
}

}  // namespace
}  // namespace lethe
