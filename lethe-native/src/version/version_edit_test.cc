#include "version/version_edit.h"

#include <gtest/gtest.h>

#include "version/version.h"
#include "version/version_set.h"

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
  e.SetLogNumber(7);
  e.SetNextFileNumber(99);
  e.SetLastSequence(12345);
  e.SetMaxColumnFamily(3);
  ColumnFamilyOptions o;
  o.pages_per_tile = 8;
  o.size_ratio = 6;
  o.delete_persistence_threshold_us = 3'600'000'000;
  o.fade_file_pick = FadeFilePick::kOldestDelete;
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
  EXPECT_EQ(d.added_cfs_[0].options.pages_per_tile, 8);
  EXPECT_EQ(d.added_cfs_[0].options.size_ratio, 6);
  EXPECT_EQ(d.added_cfs_[0].options.delete_persistence_threshold_us, 3'600'000'000u);
  EXPECT_EQ(d.added_cfs_[0].options.fade_file_pick, FadeFilePick::kOldestDelete);
  const FileMetaData& f = d.new_files_[0].meta;
  EXPECT_EQ(f.oldest_tombstone_time_us, 123456u);
  EXPECT_EQ(f.estimated_invalidated, 77u);
  EXPECT_EQ(f.delete_key_max, kMaxDeleteKey);
  EXPECT_EQ(f.num_range_tombstones, 1u);
  EXPECT_EQ(d.new_files_[0].level, 2);
}

TEST(VersionEditTest, MalformedEditsAreCorruption) {
  VersionEdit e;
  e.AddFile(0, 1, File(1, "a", "b"));
  std::string enc;
  e.EncodeTo(&enc);
  for (size_t cut = 1; cut < enc.size(); cut++) {
    VersionEdit d;
    EXPECT_FALSE(d.DecodeFrom(std::string_view(enc).substr(0, cut)).ok()) << cut;
  }
  VersionEdit d;
  EXPECT_TRUE(d.DecodeFrom("\x63\x01").IsCorruption());  // unknown tag 99
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
