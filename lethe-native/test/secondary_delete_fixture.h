// Fixtures of the secondary-delete and page-drop tests: a database in a
// MemEnv with small pages, tiles and files, and helpers to fill and read it.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lethe/db.h"
#include "lethe/env.h"
#include "test_util.h"

namespace lethe {

class SecondaryDeleteTest : public MemDbTest {
 protected:
  void SetUp() override {
    options_.write_buffer_size = 64 * 1024;
    options_.background_compactions = false;
    options_.cf_defaults.page_size = 256;
    options_.cf_defaults.pages_per_tile = 8;
    options_.cf_defaults.level1_bytes = 64 * 1024;
    options_.cf_defaults.target_file_size = 16 * 1024;
    // Layouts are asserted in bytes and pages; compressed pages have tests of their own.
    options_.cf_defaults.compression = Compression::kNone;
    Reopen();
  }
  // Opens an empty database with options_ (a family keeps the options it
  // was made with, so changed options need a new database).
  void OpenNewDatabase() {
    db_.reset();
    env_ = NewMemEnv();
    options_.env = env_.get();
    Reopen();
  }
  std::string ScanAt(const Snapshot* snap) {
    ReadOptions ro;
    ro.snapshot = snap;
    return Scan(ro);
  }
  void Merge(std::string_view k, std::string_view v, uint64_t dk) {
    ASSERT_TRUE(db_->Merge(WriteOptions(), cf_, k, v, dk).ok());
  }
  // Keys key000000.. with 40-byte values and the delete key dk(i) each.
  template <typename DeleteKey>
  void PutKeys(int n, DeleteKey dk, char value = 'v') {
    for (int i = 0; i < n; i++) {
      char key[16];
      std::snprintf(key, sizeof(key), "key%06d", i);
      Put(key, std::string(40, value == 0 ? static_cast<char>('a' + i % 7) : value), static_cast<uint64_t>(dk(i)));
    }
  }
  // Entries a full scan of the default family of `db` sees.
  static uint64_t CountEntries(DB* db) {
    uint64_t n = 0;
    auto it = db->NewIterator(ReadOptions(), db->DefaultColumnFamily());
    for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    return n;
  }
};

// A KiWi file with delete tiles of 8 pages and delete keys uncorrelated with
// the sort key: a horizon dropping one delete key value in 7 drops whole
// pages by a manifest edit, reading and writing no page. Pages of 4 KiB, so
// that a tile's dropped and rewritten pages span whole file-system blocks.
class PageDropTest : public SecondaryDeleteTest {
 protected:
  void SetUp() override {
    SecondaryDeleteTest::SetUp();
    options_.cf_defaults.page_size = 4096;
    options_.cf_defaults.target_file_size = 64 * 1024;
    options_.cf_defaults.level1_bytes = 256 * 1024;
    OpenNewDatabase();
  }
  void Load() {
    PutKeys(4000, [](int i) { return i % 7; }, 0);
    ASSERT_TRUE(db_->CompactAll().ok());
  }
  uint64_t Live() {
    uint64_t n = 0;
    auto it = db_->NewIterator(ReadOptions(), cf_);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      EXPECT_NE(0u, it->delete_key());
      n++;
    }
    EXPECT_TRUE(it->status().ok());
    return n;
  }
  // Everything dropped or rewritten was punched, except the partial 4 KiB
  // blocks (MemEnv's) at both ends of each punched extent: compressed pages
  // do not meet block boundaries.
  static void ExpectAllPunched(const DbStatistics& st) {
    const uint64_t released = st.page_bytes_dropped + st.rewrite_bytes_read;
    const uint64_t extents_at_most = st.pages_dropped + st.pages_rewritten;
    EXPECT_LE(st.bytes_punched, released);
    EXPECT_GE(st.bytes_punched + 2 * 4096 * extents_at_most, released);
    EXPECT_EQ(0u, st.bytes_punched % 4096);
  }
};

// The table files in /db.
inline std::vector<std::string> TableFiles(Env* env) {
  std::vector<std::string> children, tables;
  EXPECT_TRUE(env->GetChildren("/db", &children).ok());
  for (const std::string& c : children) {
    if (c.ends_with(".sst")) tables.push_back(c);
  }
  return tables;
}

}  // namespace lethe
