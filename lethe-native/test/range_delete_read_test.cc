// Range deletes that cost reads nothing: a point lookup stops at the newest
// range tombstone covering its key and reads no older file; an iterator
// passes over what a newer tombstone covers with one seek, in either
// direction; many tombstones
// answer as a plain model does.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "test_util.h"
#include "util/random.h"

namespace lethe {
namespace {

class RangeDeleteReadTest : public MemDbTest {
 protected:
  void SetUp() override {
    options_.write_buffer_size = 4 << 20;
    options_.page_cache_bytes = 1 << 20;
    options_.cf_defaults.page_size = 512;
    options_.cf_defaults.target_file_size = 64 << 10;
    Reopen();
  }
  static std::string Key(int i) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "key%06d", i);
    return buf;
  }
  // Keys 0..n-1 in files at the last level.
  void LoadSettled(int n) {
    for (int i = 0; i < n; i++) ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(i), "v" + std::to_string(i)).ok());
    ASSERT_TRUE(db_->CompactAll().ok());
  }
  uint64_t PageLookups() {
    DbStatistics st = db_->GetStatistics();
    return st.page_cache_hits + st.page_cache_misses + st.bloom_useful;
  }
};

TEST_F(RangeDeleteReadTest, ALookupStopsAtTheCoveringTombstoneAndReadsNoOlderFile) {
  LoadSettled(2000);
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf_, Key(100), Key(900)).ok());
  // In the memtable.
  uint64_t before = PageLookups();
  for (int i = 100; i < 900; i += 7) EXPECT_EQ("NOT_FOUND", Get(Key(i)));
  EXPECT_EQ(before, PageLookups()) << "no file was looked at";
  EXPECT_EQ("v950", Get(Key(950)));
  EXPECT_GT(PageLookups(), before) << "an uncovered key is read from its file";
  // Flushed: the tombstone's file is newer than the data's.
  ASSERT_TRUE(db_->Flush().ok());
  before = PageLookups();
  for (int i = 100; i < 900; i += 7) EXPECT_EQ("NOT_FOUND", Get(Key(i)));
  EXPECT_EQ(before, PageLookups()) << "no older file was looked at";
  // A value written after the delete is found, and a merge on a deleted key
  // starts from nothing.
  ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(500), "new").ok());
  ASSERT_TRUE(db_->Merge(WriteOptions(), cf_, Key(501), "m").ok());
  EXPECT_EQ("new", Get(Key(500)));
  EXPECT_EQ("m", Get(Key(501)));
}

TEST_F(RangeDeleteReadTest, AnIteratorSeeksPastWhatANewerTombstoneCovers) {
  LoadSettled(3000);
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf_, Key(10), Key(2000)).ok());
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf_, Key(2100), Key(2900)).ok());
  for (bool flushed : {false, true}) {
    if (flushed) {
      ASSERT_TRUE(db_->Flush().ok());
    }
    const uint64_t skips = db_->GetStatistics().range_delete_skips;
    const uint64_t pages = PageLookups();
    auto it = db_->NewIterator(ReadOptions(), cf_);
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
    ASSERT_TRUE(it->status().ok());
    EXPECT_EQ(10 + 100 + 100, n);
    // One seek per covered stretch of the data's source, not one per entry:
    // the pages read are about those of the 210 live entries (a page of
    // 512 B holds about 20), not those of all 3,000.
    const uint64_t seeks = db_->GetStatistics().range_delete_skips - skips;
    EXPECT_GE(seeks, 2u) << (flushed ? "flushed" : "in the memtable");
    EXPECT_LE(seeks, 4u) << (flushed ? "flushed" : "in the memtable");
    EXPECT_LT(PageLookups() - pages, 40u) << (flushed ? "flushed" : "in the memtable");
    // Backwards alike: one seek before each covered stretch.
    const uint64_t back_skips = db_->GetStatistics().range_delete_skips;
    std::vector<std::string> backward;
    for (it->SeekToLast(); it->Valid(); it->Prev()) backward.emplace_back(it->key());
    ASSERT_TRUE(it->status().ok());
    ASSERT_EQ(210u, backward.size());
    EXPECT_EQ(Key(2999), backward.front());
    EXPECT_EQ(Key(2900), backward[99]);
    EXPECT_EQ(Key(2099), backward[100]);
    EXPECT_EQ(Key(9), backward[200]);
    const uint64_t back_seeks = db_->GetStatistics().range_delete_skips - back_skips;
    EXPECT_GE(back_seeks, 2u) << (flushed ? "flushed" : "in the memtable");
    EXPECT_LE(back_seeks, 4u) << (flushed ? "flushed" : "in the memtable");
  }
}

TEST_F(RangeDeleteReadTest, ManySmallTombstonesAnswerAsTheModel) {
  Random rnd(11);
  std::map<std::string, std::string> model;
  for (int i = 0; i < 5000; i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(i), "v" + std::to_string(i)).ok());
    model[Key(i)] = "v" + std::to_string(i);
  }
  ASSERT_TRUE(db_->CompactAll().ok());
  for (int r = 0; r < 600; r++) {
    const int lo = static_cast<int>(rnd.Uniform(5000)), hi = lo + 1 + static_cast<int>(rnd.Uniform(12));
    ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf_, Key(lo), Key(hi)).ok());
    model.erase(model.lower_bound(Key(lo)), model.lower_bound(Key(hi)));
    if (r % 97 == 0) {  // some rewritten between the deletes
      const int k = static_cast<int>(rnd.Uniform(5000));
      ASSERT_TRUE(db_->Put(WriteOptions(), cf_, Key(k), "w").ok());
      model[Key(k)] = "w";
    }
    if (r == 300) {
      ASSERT_TRUE(db_->Flush().ok());
    }
  }
  for (int i = 0; i < 5000; i++) {
    auto m = model.find(Key(i));
    ASSERT_EQ(m == model.end() ? "NOT_FOUND" : m->second, Get(Key(i))) << i;
  }
  std::string expected;
  for (const auto& [k, v] : model) expected += k + "=" + v + " ";
  EXPECT_EQ(expected, ScanOf(db_.get()));
}

}  // namespace
}  // namespace lethe
