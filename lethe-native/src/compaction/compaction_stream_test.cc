// CompactionStream rules: snapshot stripes, merge folding, tombstone and
// range-tombstone dropping.
#include "compaction/compaction_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "lethe/options.h"
#include "vector_iterator.h"

namespace lethe {
namespace {

VectorIterator::E Ent(std::string k, SequenceNumber s, EntryKind kind, std::string v = "", uint64_t dk = kMaxDeleteKey) {
  return {MakeInternalKey(k, s, kind), std::move(v), dk};
}

// Runs the stream to its end: "key@seqKIND[:value] " per output entry, and
// "[start,end)@seq " per output tombstone into tomb_out (if not null).
std::string Drain(CompactionStream* stream, bool with_values, std::string* tomb_out) {
  std::vector<OutputEntry> out;
  while (stream->NextKey(&out)) {
  }
  std::string r;
  for (const auto& e : out) {
    uint64_t tag = ExtractTag(e.ikey);
    const char* kind = TagKind(tag) == EntryKind::kValue ? "V" : TagKind(tag) == EntryKind::kMerge ? "M" : "D";
    r += std::string(ExtractSortKey(e.ikey)) + "@" + std::to_string(TagSequence(tag)) + kind;
    r += (with_values ? ":" + e.value : std::string()) + " ";
  }
  if (tomb_out) {
    tomb_out->clear();
    for (const auto& t : stream->OutputTombstones()) *tomb_out += "[" + t.start + "," + t.end + ")@" + std::to_string(t.seq) + " ";
  }
  return r;
}

std::string Compact(std::vector<VectorIterator::E> in, std::vector<RangeTombstone> tombs,
                std::vector<SequenceNumber> snaps, bool deeper, std::string* tomb_out = nullptr) {
  VectorIterator it(std::move(in));
  CompactionStream stream(&it, tombs, snaps, [deeper](std::string_view, std::string_view) { return deeper; });
  return Drain(&stream, true, tomb_out);
}

TEST(CompactionStreamTest, KeepsNewestPerSnapshotStripe) {
  auto in = std::vector{Ent("a", 1, EntryKind::kValue, "1"), Ent("a", 2, EntryKind::kValue, "2"),
                        Ent("a", 3, EntryKind::kValue, "3"), Ent("a", 4, EntryKind::kValue, "4")};
  EXPECT_EQ(Compact(in, {}, {}, true), "a@4V:4 ");
  EXPECT_EQ(Compact(in, {}, {2}, true), "a@4V:4 a@2V:2 ");
  EXPECT_EQ(Compact(in, {}, {1, 3}, true), "a@4V:4 a@3V:3 a@1V:1 ");
}

TEST(CompactionStreamTest, FoldsMerges) {
  auto in = std::vector{Ent("l", 1, EntryKind::kValue, "x"), Ent("l", 2, EntryKind::kMerge, "a"),
                        Ent("l", 3, EntryKind::kMerge, "b")};
  EXPECT_EQ(Compact(in, {}, {}, true), "l@3V:x,a,b ");
  EXPECT_EQ(Compact(in, {}, {2}, true), "l@3M:b l@2V:x,a ");
  auto ops = std::vector{Ent("l", 2, EntryKind::kMerge, "a"), Ent("l", 3, EntryKind::kMerge, "b")};
  EXPECT_EQ(Compact(ops, {}, {}, true), "l@3M:a,b ");   // data may lie deeper
  EXPECT_EQ(Compact(ops, {}, {}, false), "l@3V:a,b ");  // bottom: becomes a value
  auto over_delete = std::vector{Ent("l", 1, EntryKind::kTombstone), Ent("l", 2, EntryKind::kMerge, "a")};
  EXPECT_EQ(Compact(over_delete, {}, {}, true), "l@2V:a ");
}

TEST(CompactionStreamTest, DropsTombstonesOnlyWhenNothingOlderRemains) {
  auto in = std::vector{Ent("a", 1, EntryKind::kValue, "1"), Ent("a", 2, EntryKind::kTombstone)};
  EXPECT_EQ(Compact(in, {}, {}, true), "a@2D: ");  // deeper levels may hold "a"
  EXPECT_EQ(Compact(in, {}, {}, false), "");       // bottom: tombstone and value gone
  EXPECT_EQ(Compact(in, {}, {1}, false), "a@2D: a@1V:1 ");  // a snapshot still sees "1"
}

TEST(CompactionStreamTest, RangeTombstones) {
  auto in = std::vector{Ent("b", 1, EntryKind::kValue, "old"), Ent("c", 5, EntryKind::kValue, "new"),
                        Ent("e", 2, EntryKind::kValue, "keep")};
  std::string tombs;
  EXPECT_EQ(Compact(in, {{"a", "d", 3}}, {}, true, &tombs), "c@5V:new e@2V:keep ");
  EXPECT_EQ(tombs, "[a,d)@3 ");
  EXPECT_EQ(Compact(in, {{"a", "d", 3}}, {}, false, &tombs), "c@5V:new e@2V:keep ");
  EXPECT_EQ(tombs, "");  // bottom and visible to all: dropped with what it covered
  EXPECT_EQ(Compact(in, {{"a", "d", 3}}, {2}, false, &tombs), "b@1V:old c@5V:new e@2V:keep ");
  EXPECT_EQ(tombs, "[a,d)@3 ");
  // Overlapping tombstones in one stripe collapse to the newest per fragment.
  Compact(in, {{"a", "d", 3}, {"b", "f", 4}}, {}, true, &tombs);
  EXPECT_EQ(tombs, "[a,b)@3 [b,d)@4 [d,f)@4 ");
}

// A flush answers "may older data lie deeper?" from the files' Bloom filters,
// which may mean opening tables: the stream asks only for a key whose output
// depends on it (a tombstone, or merges with no value below them), once each.
TEST(CompactionStreamTest, AsksAboutDeeperDataOnlyWhereTheOutputDependsOnIt) {
  VectorIterator it(std::vector{Ent("a", 5, EntryKind::kValue, "1"), Ent("a", 4, EntryKind::kMerge, "x"),
                                Ent("b", 6, EntryKind::kMerge, "2"), Ent("b", 3, EntryKind::kValue, "y"),
                                Ent("c", 7, EntryKind::kMerge, "3"), Ent("c", 2, EntryKind::kMerge, "z"),
                                Ent("d", 8, EntryKind::kTombstone), Ent("e", 9, EntryKind::kValue, "5")});
  std::vector<std::string> asked;
  CompactionStream stream(&it, {}, {}, [&](std::string_view lo, std::string_view) {
    asked.emplace_back(lo);
    return false;
  });
  std::vector<OutputEntry> out;
  while (stream.NextKey(&out)) {
  }
  ASSERT_TRUE(stream.status().ok());
  EXPECT_EQ(asked, (std::vector<std::string>{"c", "d"}));
  // Nothing deeper: c's merges became a value, d's tombstone went.
  ASSERT_EQ(out.size(), 4u);  // a, b, c, e
  EXPECT_EQ(TagKind(ExtractTag(out[2].ikey)), EntryKind::kValue);
  EXPECT_EQ(ExtractSortKey(out[2].ikey), "c");
}

// Sequence zeroing (ZeroOldSequences). `deeper_keys`: the keys a deeper
// level holds (a range asks whether it holds any of them).
std::string CompactZeroing(std::vector<VectorIterator::E> in, std::vector<RangeTombstone> tombs,
                           std::vector<SequenceNumber> snaps, std::vector<std::string> deeper_keys,
                           const SecondaryDeletes* secondary = nullptr, std::string* tomb_out = nullptr) {
  VectorIterator it(std::move(in));
  auto deeper = [deeper_keys](std::string_view lo, std::string_view hi) {
    return std::any_of(deeper_keys.begin(), deeper_keys.end(), [&](const std::string& k) { return lo <= k && k <= hi; });
  };
  CompactionStream stream(&it, tombs, snaps, deeper, secondary);
  stream.ZeroOldSequences();
  return Drain(&stream, false, tomb_out);
}

TEST(CompactionStreamTest, ZeroesSequencesOfValuesNothingCanTellApart) {
  auto in = std::vector{Ent("a", 7, EntryKind::kValue, "x"), Ent("b", 8, EntryKind::kValue, "y"),
                        Ent("b", 3, EntryKind::kValue, "old")};
  EXPECT_EQ(CompactZeroing(in, {}, {}, {}), "a@0V b@0V ");
}

TEST(CompactionStreamTest, KeepsSequencesThatSomethingStillComparesWith) {
  // A snapshot older than the value reads older versions (here none), and
  // one taken between two versions keeps both apart.
  EXPECT_EQ(CompactZeroing({Ent("a", 7, EntryKind::kValue)}, {}, {5}, {}), "a@7V ");
  EXPECT_EQ(CompactZeroing({Ent("a", 7, EntryKind::kValue), Ent("a", 3, EntryKind::kValue)}, {}, {5}, {}),
            "a@7V a@0V ");
  // An older version of the key in a deeper level.
  EXPECT_EQ(CompactZeroing({Ent("a", 7, EntryKind::kValue)}, {}, {}, {"a"}), "a@7V ");
  // Merge operands and tombstones keep their order with what lies deeper.
  EXPECT_EQ(CompactZeroing({Ent("a", 7, EntryKind::kMerge, "m")}, {}, {}, {"a"}), "a@7M ");
  EXPECT_EQ(CompactZeroing({Ent("a", 7, EntryKind::kTombstone)}, {}, {}, {"a"}), "a@7D ");
}

// A range tombstone older than the value stays (it covers a deeper key),
// so the value must stay newer than it.
TEST(CompactionStreamTest, KeepsTheSequenceOfAValueInsideAKeptRangeTombstone) {
  std::string tombs;
  EXPECT_EQ(CompactZeroing({Ent("b", 10, EntryKind::kValue), Ent("y", 11, EntryKind::kValue)}, {{"a", "x", 5}}, {},
                           {"w"}, nullptr, &tombs),
            "b@10V y@0V ");
  EXPECT_EQ(tombs, "[a,x)@5 ");
}

// A delete-key range record hides only what was written before it: a value
// written after it must not become older than it.
TEST(CompactionStreamTest, KeepsSequencesNewerThanADeleteKeyRangeRecord) {
  SecondaryDeletes secondary;
  secondary.ranges.push_back(DeleteKeyRangeRecord{6, 0, 100, 0});
  EXPECT_EQ(CompactZeroing({Ent("a", 4, EntryKind::kValue, "", 500), Ent("b", 9, EntryKind::kValue, "", 50)}, {}, {},
                           {}, &secondary),
            "a@0V b@9V ");
}

}  // namespace
}  // namespace lethe
