// Point lookups that name the delete key of the entry they look for
// (ReadOptions::delete_key), as a window store's do: files whose delete keys
// lie elsewhere are passed over unread, and a tombstone, whatever its delete
// key, is still found.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "test_util.h"

namespace lethe {
namespace {

class DeleteKeyLookupTest : public MemDbTest {
 protected:
  void SetUp() override {
    options_.cf_defaults.level0_compaction_trigger = 100;
    options_.cf_defaults.level0_stop_writes_trigger = 200;
    options_.cf_defaults.page_size = 512;
    Reopen();
  }
  // Keys by key, then window, as a window store sorts them.
  static std::string Key(int i, int window) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "key%04d@%02d", i, window);
    return buf;
  }
  // One level-0 file of window w: keys 0..99, delete key w.
  void FlushWindow(int w) {
    for (int i = 0; i < 100; i++) Put(Key(i, w), "v" + std::to_string(w), static_cast<uint64_t>(w));
    ASSERT_TRUE(db_->Flush().ok());
  }
  std::string GetIn(int i, int window) {
    ReadOptions ro;
    ro.has_delete_key = true;
    ro.delete_key = static_cast<uint64_t>(window);
    std::string v;
    Status s = db_->Get(ro, cf_, Key(i, window), &v);
    if (s.IsNotFound()) return "NOT_FOUND";
    EXPECT_TRUE(s.ok()) << s.ToString();
    return v;
  }
  uint64_t FileReads() {
    DbStatistics st = db_->GetStatistics();
    return st.page_cache_hits + st.page_cache_misses + st.bloom_useful;
  }
};

TEST_F(DeleteKeyLookupTest, FilesOfOtherDeleteKeysAreNotRead) {
  for (int w = 1; w <= 3; w++) FlushWindow(w);
  // A window no file holds: without its delete key every file is probed.
  uint64_t before = FileReads();
  EXPECT_EQ("NOT_FOUND", Get(Key(50, 4)));
  EXPECT_GE(FileReads() - before, 3u);
  before = FileReads();
  EXPECT_EQ("NOT_FOUND", GetIn(50, 4));
  EXPECT_EQ(0u, FileReads() - before) << "no file holds delete key 4";
  // A present window's entry is read from its file alone.
  before = FileReads();
  EXPECT_EQ("v2", GetIn(50, 2));
  EXPECT_EQ(1u, FileReads() - before);
  EXPECT_EQ("NOT_FOUND", GetIn(50, 0));
}

TEST_F(DeleteKeyLookupTest, ATombstoneIsFoundWhateverItsDeleteKey) {
  for (int w = 1; w <= 3; w++) FlushWindow(w);
  // Window 1's key 7 deleted, in a file that otherwise holds window 5 only.
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, Key(7, 1)).ok());
  Put(Key(7, 5), "v5", 5);
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ("NOT_FOUND", GetIn(7, 1)) << "the tombstone's file is read";
  EXPECT_EQ("v1", GetIn(8, 1));
  EXPECT_EQ("v5", GetIn(7, 5));
  // A range tombstone alike.
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf_, Key(20, 0), Key(30, 0)).ok());
  Put(Key(99, 6), "v6", 6);
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ("NOT_FOUND", GetIn(25, 2));
  EXPECT_EQ("v2", GetIn(30, 2));
  // Compacted into one file of every delete key, the answers stay.
  ASSERT_TRUE(db_->CompactAll().ok());
  EXPECT_EQ("NOT_FOUND", GetIn(7, 1));
  EXPECT_EQ("NOT_FOUND", GetIn(25, 2));
  EXPECT_EQ("v3", GetIn(60, 3));
  EXPECT_EQ("v6", GetIn(99, 6));
}

}  // namespace
}  // namespace lethe
