#include "version/version_edit.h"

#include <gtest/gtest.h>

#include "lethe/env.h"
#include "util/coding.h"
#include "version/version.h"
#include "version/version_set.h"
#include "wal/log_writer.h"

namespace lethe {
namespace {

FileMetaData File(uint64_t n, std::string lo, std::string hi) {
  FileMetaData f;
  f.number = n;
  f.file_size = 1000 + n;
  f.smallest = std::move(lo);
  f.largest = std::move(hi);
  f.smallest_seq = 1;
  f.largest_seq = n;
  f.num_entries = 10;
  f.num_point_tombstones = 2;
  f.num_range_tombstones = 1;
  f.delete_key_min = 5;
  f.delete_key_max = kMaxDeleteKey;
  f.oldest_tombstone_time_us = 123456;
  f.estimated_invalidated = 77;
  f.created_time_us = 7;
  return f;
}

TEST(VersionEditTest, RoundTripKeepsEveryField) {
  VersionEdit e;
  e.SetLogNumber(7, /*names_wal=*/true);
  e.SetEditNumber(31);
  e.SetNextFileNumber(99);
  e.SetLastSequence(12345);
  e.SetMaxColumnFamily(3);
  ColumnFamilyOptions o;
  o.pages_per_tile = 8;
  o.size_ratio = 6;
  o.delete_persistence_threshold_us = 3'600'000'000;
  o.fade_file_pick = FadeFilePick::kOldestDelete;
  o.dynamic_level_bytes = true;
  e.AddColumnFamily({3, "state", o});
  e.DropColumnFamily(2);
  e.AddFile(3, 2, File(42, "a", "z"));
  e.DeleteFile(3, 1, 40);
  std::string enc;
  e.EncodeTo(&enc);
  VersionEdit d;
  ASSERT_TRUE(d.DecodeFrom(enc).ok());
  std::string enc2;
  d.EncodeTo(&enc2);
  EXPECT_EQ(enc, enc2);
  EXPECT_EQ(*d.log_number_, 7u);
  EXPECT_TRUE(d.log_names_wal_);
  EXPECT_EQ(*d.edit_number_, 31u);
  EXPECT_EQ(d.added_cfs_[0].options.pages_per_tile, 8);
  EXPECT_EQ(d.added_cfs_[0].options.size_ratio, 6);
  EXPECT_EQ(d.added_cfs_[0].options.delete_persistence_threshold_us, 3'600'000'000u);
  EXPECT_EQ(d.added_cfs_[0].options.fade_file_pick, FadeFilePick::kOldestDelete);
  EXPECT_TRUE(d.added_cfs_[0].options.dynamic_level_bytes);
  const FileMetaData& f = d.new_files_[0].meta;
  EXPECT_EQ(f.oldest_tombstone_time_us, 123456u);
  EXPECT_EQ(f.estimated_invalidated, 77u);
  EXPECT_EQ(f.delete_key_max, kMaxDeleteKey);
  EXPECT_EQ(f.tombstone_delete_key_max, kMaxDeleteKey);  // not written: unknown
  EXPECT_EQ(f.num_range_tombstones, 1u);
  EXPECT_EQ(d.new_files_[0].level, 2);
}

TEST(VersionEditTest, APlaceholderLogNumberIsNotAWal) {
  VersionEdit e;
  e.SetLogNumber(12, /*names_wal=*/false);
  std::string enc;
  e.EncodeTo(&enc);
  VersionEdit d;
  ASSERT_TRUE(d.DecodeFrom(enc).ok());
  EXPECT_EQ(*d.log_number_, 12u);
  EXPECT_FALSE(d.log_names_wal_);
  EXPECT_FALSE(d.edit_number_.has_value());
}

TEST(VersionEditTest, SecondaryDeletesAndPageListsRoundTrip) {
  VersionEdit e;
  SecondaryDeletes sd;
  sd.horizons = {{10, 100, 1000}, {12, 150, 1100}};
  sd.ranges = {{11, 5, 7, 1050}, {13, 0, kMaxDeleteKey - 1, 1200}};
  e.SetSecondaryDeletes(3, sd);
  FileMetaData f = File(42, "a", "z");
  f.dropped_pages = {0, 3, 4, 1000};
  f.secondary_applied_seq = 12;
  f.patch_file = 77;
  f.patch_size = 4096;
  f.patched_pages = {1, 9};
  e.AddFile(3, 2, f);
  std::string enc;
  e.EncodeTo(&enc);
  VersionEdit d;
  ASSERT_TRUE(d.DecodeFrom(enc).ok());
  std::string enc2;
  d.EncodeTo(&enc2);
  EXPECT_EQ(enc, enc2);
  ASSERT_EQ(1u, d.secondary_deletes_.size());
  const SecondaryDeletes& r = d.secondary_deletes_[0].second;
  ASSERT_EQ(2u, r.horizons.size());
  EXPECT_EQ(150u, r.horizons[1].horizon);
  EXPECT_EQ(1100u, r.horizons[1].time_us);
  ASSERT_EQ(2u, r.ranges.size());
  EXPECT_EQ(kMaxDeleteKey - 1, r.ranges[1].hi);
  const FileMetaData& g = d.new_files_[0].meta;
  EXPECT_EQ(f.dropped_pages, g.dropped_pages);
  EXPECT_EQ(f.patched_pages, g.patched_pages);
  EXPECT_EQ(77u, g.patch_file);
  EXPECT_EQ(4096u, g.patch_size);
  EXPECT_EQ(12u, g.secondary_applied_seq);
  EXPECT_EQ(1, g.PatchSlot(9));
  EXPECT_EQ(-1, g.PatchSlot(2));
  EXPECT_TRUE(g.PageDropped(1000));
  EXPECT_FALSE(g.PageDropped(1));

  // Which entries the records hide, at which read sequence.
  EXPECT_EQ(kMaxSequenceNumber, r.HiddenFrom(20, 150));    // at the horizon: kept
  EXPECT_EQ(10u, r.HiddenFrom(20, 99));                   // below the first horizon
  EXPECT_EQ(13u, r.HiddenFrom(5, 200));                   // above every horizon: the range, for an older entry
  EXPECT_EQ(10u, r.HiddenFrom(12, 6));                    // a newer entry: only the horizon
  EXPECT_EQ(kMaxSequenceNumber, r.HiddenFrom(14, 160));   // newer than every range
  EXPECT_FALSE(r.Hides(5, EntryKind::kTombstone, 6, 100));  // point tombstones never
}

TEST(VersionEditTest, DisorderedSecondaryDeletesAreCorruption) {
  SecondaryDeletes sd;
  sd.horizons = {{10, 100, 1}, {9, 150, 2}};  // sequences must ascend
  std::string enc;
  sd.EncodeTo(&enc);
  SecondaryDeletes d;
  EXPECT_TRUE(d.DecodeFrom(enc).IsCorruption());
  sd.horizons = {{10, 100, 1}, {12, 50, 2}};  // horizons never move back
  enc.clear();
  sd.EncodeTo(&enc);
  EXPECT_TRUE(d.DecodeFrom(enc).IsCorruption());
  sd.horizons.clear();
  sd.ranges = {{3, 9, 2, 1}};  // hi < lo
  enc.clear();
  sd.EncodeTo(&enc);
  EXPECT_TRUE(d.DecodeFrom(enc).IsCorruption());
}

TEST(VersionEditTest, MalformedEditsAreCorruption) {
  VersionEdit e;
  FileMetaData f = File(1, "a", "b");
  f.dropped_pages = {2, 5};
  f.patch_file = 9;
  f.patch_size = 100;
  f.patched_pages = {3};
  e.AddFile(0, 1, f);
  VersionEdit records;
  SecondaryDeletes sd;
  sd.horizons = {{4, 8, 1}};
  sd.ranges = {{5, 1, 2, 3}};
  records.SetSecondaryDeletes(0, sd);
  for (const VersionEdit* edit : {&e, &records}) {  // one record each: every prefix is damaged
    std::string enc;
    edit->EncodeTo(&enc);
    for (size_t cut = 1; cut < enc.size(); cut++) {
      VersionEdit d;
      EXPECT_FALSE(d.DecodeFrom(std::string_view(enc).substr(0, cut)).ok()) << cut;
    }
  }
  VersionEdit d;
  EXPECT_TRUE(d.DecodeFrom("\x63\x01").IsCorruption());  // unknown tag 99
}

// Found by fuzz/manifest_fuzzer: a column family with about 10^9 Bloom bits
// a key (a 64-bit value truncated into an int); replaying the WAL into it at
// open built a filter of gigabytes. Options outside the ranges DB::Open
// accepts are Corruption now.
TEST(VersionEditTest, FuzzOutOfRangeColumnFamilyOptionsAreCorruption) {
  const std::string edit(
      "\x02\x07\x03\x01\x04\x01\x00\x1b\x01\x0a\x02\x80\x01\x03\x01\x04"
      "\xfb\xfe\x92\xfa\x23\x38\x2e\x73\x73\x74\x30\x30\x30\x30\x38\x2e"
      "\x73\x73\x74",
      35);
  VersionEdit d;
  EXPECT_TRUE(d.DecodeFrom(edit).IsCorruption());

  struct Case {
    uint32_t tag;
    uint64_t value;
    bool ok;
  };
  const Case cases[] = {
      {1, 1, false}, {1, 2, true},                                   // size ratio
      {2, 63, false}, {2, 64, true},                                 // page size
      {3, 0, true}, {3, 4096, true}, {3, 4097, false},               // pages per tile (0: auto)
      {4, 0, true}, {4, 64, true}, {4, 65, false},                   // Bloom bits per key
      {7, INT32_MAX, true}, {8, uint64_t{INT32_MAX} + 1, false},     // level-0 triggers
      {13, 0, true}, {13, 1, true}, {13, 2, false},                  // dynamic level targets
      {15, 0, true}, {15, 1, true}, {15, 2, false},                  // compaction style
      {16, 1, false}, {16, 2, true}, {16, uint64_t{INT32_MAX} + 1, false},  // time-ordered max files
      {99, UINT64_MAX, true},                                        // unknown: ignored
  };
  for (const Case& c : cases) {
    std::string opts;
    PutVarint32(&opts, c.tag);
    PutVarint64(&opts, c.value);
    ColumnFamilyOptions o;
    EXPECT_EQ(c.ok, DecodeColumnFamilyOptions(opts, &o).ok()) << c.tag << "=" << c.value;
  }
}

TEST(VersionEditTest, TombstoneDeleteKeyBoundRoundTrips) {
  VersionEdit e;
  FileMetaData f = File(42, "a", "z");
  f.tombstone_delete_key_max = 77;
  e.AddFile(3, 0, f);
  std::string enc;
  e.EncodeTo(&enc);
  VersionEdit d;
  ASSERT_TRUE(d.DecodeFrom(enc).ok());
  EXPECT_EQ(d.new_files_[0].meta.tombstone_delete_key_max, 77u);
}

TEST(VersionEditTest, CompactionStyleRoundTripsAndOlderManifestsAreLeveled) {
  ColumnFamilyOptions o;
  o.compaction_style = CompactionStyle::kTimeOrdered;
  o.time_ordered_max_files = 40;
  std::string enc;
  EncodeColumnFamilyOptions(o, &enc);
  ColumnFamilyOptions d;
  ASSERT_TRUE(DecodeColumnFamilyOptions(enc, &d).ok());
  EXPECT_EQ(d.compaction_style, CompactionStyle::kTimeOrdered);
  EXPECT_EQ(d.time_ordered_max_files, 40);
  // Options as written before tag 15 existed: the tree was built leveled.
  std::string older;
  PutVarint32(&older, 1);
  PutVarint64(&older, 10);
  ColumnFamilyOptions from_older;
  from_older.compaction_style = CompactionStyle::kTimeOrdered;
  ASSERT_TRUE(DecodeColumnFamilyOptions(older, &from_older).ok());
  EXPECT_EQ(from_older.compaction_style, CompactionStyle::kLeveled);
}

TEST(VersionEditTest, DynamicLevelTargetsRoundTripAndOlderManifestsKeepStaticTargets) {
  ColumnFamilyOptions o;
  o.dynamic_level_bytes = true;
  std::string enc;
  EncodeColumnFamilyOptions(o, &enc);
  ColumnFamilyOptions d;
  ASSERT_TRUE(DecodeColumnFamilyOptions(enc, &d).ok());
  EXPECT_TRUE(d.dynamic_level_bytes);
  // Options as written before tag 13 existed: the tree was built with static targets.
  std::string older;
  PutVarint32(&older, 1);
  PutVarint64(&older, 10);
  ColumnFamilyOptions from_older;
  from_older.dynamic_level_bytes = true;
  ASSERT_TRUE(DecodeColumnFamilyOptions(older, &from_older).ok());
  EXPECT_FALSE(from_older.dynamic_level_bytes);
}

// Found by fuzz/manifest_fuzzer: a file record with its dropped-page list
// twice ([1, 3] then [1, 3] again) decoded as [1, 3, 1, 3], which readers
// binary-search. A repeated list, or a delta that wraps, is Corruption.
TEST(VersionEditTest, FuzzPageListsThatDoNotAscendAreCorruption) {
  const std::string repeated(
      "\x07\x00\x01\x12\x12\x03\x02\x01\x02\x12\x03\x02\x01\x02\x01\x04"
      "\x02\x12\x03\x02\x01\x04",
      22);
  VersionEdit d;
  Status s = d.DecodeFrom(repeated);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("repeated page list"), std::string::npos) << s.ToString();

  std::string pages;  // [0xfffffff0, 0x10 after wrapping]
  PutVarint32(&pages, 2);
  PutVarint32(&pages, 0xfffffff0u);
  PutVarint32(&pages, 0x20);
  std::string file;
  PutVarint32(&file, 1);  // file number
  PutVarint32(&file, 4);
  PutVarint32(&file, 18);  // dropped pages
  PutLengthPrefixed(&file, pages);
  std::string wrapping;
  PutVarint32(&wrapping, 7);  // new file, cf 0, level 1
  PutVarint32(&wrapping, 0);
  PutVarint32(&wrapping, 1);
  PutLengthPrefixed(&wrapping, file);
  s = d.DecodeFrom(wrapping);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("bad page list"), std::string::npos) << s.ToString();
}

TEST(VersionTest, ApplyKeepsLevelsSortedAndDisjoint) {
  auto base = std::make_shared<Version>();
  VersionEdit add;
  add.AddColumnFamily({0, "default", ColumnFamilyOptions()});
  add.AddFile(0, 1, File(3, "m", "p"));
  add.AddFile(0, 1, File(2, "a", "c"));
  add.AddFile(0, 0, File(5, "a", "z"));
  add.AddFile(0, 0, File(6, "b", "y"));
  std::shared_ptr<Version> v;
  ASSERT_TRUE(base->Apply(add, &v).ok());
  const ColumnFamilyFiles* f = v->Find(0);
  EXPECT_EQ(f->levels[1][0]->number, 2u);
  EXPECT_EQ(f->levels[0][0]->number, 6u);  // newest first
  VersionEdit overlap;
  overlap.AddFile(0, 1, File(7, "b", "d"));
  std::shared_ptr<Version> bad;
  EXPECT_TRUE(v->Apply(overlap, &bad).IsCorruption());
  VersionEdit del;
  del.DeleteFile(0, 1, 999);
  EXPECT_TRUE(v->Apply(del, &bad).IsCorruption());
}

// Found with the fuzz input of FuzzOutOfRangeColumnFamilyOptionsAreCorruption:
// a manifest whose only family is not the default one recovered, and
// DB::DefaultColumnFamily then threw std::out_of_range.
TEST(VersionSetTest, FuzzManifestWithoutTheDefaultFamilyIsCorruption) {
  auto env = NewMemEnv();
  ASSERT_TRUE(env->CreateDirIfMissing("/db").ok());
  VersionEdit e;
  e.SetNextFileNumber(7);
  e.SetLastSequence(1);
  e.AddColumnFamily({1, "other", ColumnFamilyOptions()});
  std::string record;
  e.EncodeTo(&record);
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(env->NewWritableFile(ManifestFileName("/db", 5), &file).ok());
  log::Writer writer(std::move(file), /*checksums=*/true);
  ASSERT_TRUE(writer.AddRecord(record).ok());
  ASSERT_TRUE(writer.Close().ok());
  ASSERT_TRUE(env->WriteStringToFile(CurrentFileName("/db"), "MANIFEST-000005\n").ok());
  VersionSet versions("/db", env.get());
  Status s = versions.Recover();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

TEST(VersionSetTest, ParseFileName) {
  uint64_t n;
  EXPECT_EQ(ParseFileName("000012.sst", &n), FileType::kTable);
  EXPECT_EQ(n, 12u);
  EXPECT_EQ(ParseFileName("000007.log", &n), FileType::kLog);
  EXPECT_EQ(ParseFileName("MANIFEST-000003", &n), FileType::kManifest);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(ParseFileName("CURRENT", &n), FileType::kCurrent);
  EXPECT_EQ(ParseFileName("CURRENT.tmp", &n), FileType::kTemp);
  EXPECT_EQ(ParseFileName("foo.sst", &n), FileType::kUnknown);
  EXPECT_EQ(ParseFileName("12.txt", &n), FileType::kUnknown);
}

}  // namespace
}  // namespace lethe
