// Files of earlier table formats stay readable. Each fixture is a database
// written with the operations of FixtureRule below by an earlier engine:
// testdata/format1_db before page compression (table format 1),
// testdata/format2_db before partitioned indexes (table format 2, LZ4 pages
// and ZSTD in the last level, with patch tables from the horizon's page
// drops), testdata/format3_db before the compact index (table format 3,
// partitioned, whole keys and fixed-size delete keys in the index). Each is
// read, then grown, compacted and reopened with today's
// engine, which mixes old and new files (compaction rewrites what it merges;
// a trivially moved file keeps its format).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "lethe/db.h"
#include "lethe/env.h"
#include "sst/table_format.h"
#include "test_util.h"
#include "util/coding.h"

namespace lethe {
namespace {

// How the fixtures were written (pages_per_tile 4, page_size 1 KiB, a WAL,
// no background compactions):
// keys key00000..key02999 with Value(i) and delete key i % 10, flushed every
// 1,000 keys and compacted after 2,000; then a point delete of every 7th key
// below 1,500, a range delete [key02000, key02100), five list appends to
// "list" (x0..x4), horizon 1 (removes delete key 0), a flush, and last a put
// of "wal-only" that only the WAL holds.
struct FixtureRule {
  static std::string Key(int i) {
    char k[16];
    std::snprintf(k, sizeof(k), "key%05d", i);
    return k;
  }
  static std::string Value(int i) { return "v" + std::to_string(i) + std::string(50 + i % 100, static_cast<char>('a' + i % 26)); }
  static bool Live(int i) { return !(i < 1500 && i % 7 == 0) && !(i >= 2000 && i < 2100) && i % 10 != 0; }
};

// The fixture's table format version.
class FormatCompatTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    options_.env = env_.get();
    options_.background_compactions = false;
    const std::string dir = std::string(LETHE_TESTDATA_DIR) + "/format" + std::to_string(GetParam()) + "_db";
    std::vector<std::string> names;
    ASSERT_TRUE(Env::Default()->GetChildren(dir, &names).ok());
    ASSERT_TRUE(env_->CreateDirIfMissing("/db").ok());
    for (const std::string& n : names) {
      if (n == "." || n == "..") continue;
      std::ifstream in(dir + "/" + n, std::ios::binary);
      ASSERT_TRUE(in.good()) << n;
      std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      ASSERT_TRUE(env_->WriteStringToFile("/db/" + n, data).ok());
    }
  }
  void Open() {
    db_.reset();
    Status s = DB::Open(options_, "/db", &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void ExpectContents(int keys) {
    std::string v;
    for (int i = 0; i < keys; i++) {
      Status s = db_->Get(ReadOptions(), db_->DefaultColumnFamily(), FixtureRule::Key(i), &v);
      if (i < 3000 && !FixtureRule::Live(i)) {
        ASSERT_TRUE(s.IsNotFound()) << i << " " << s.ToString();
      } else {
        ASSERT_TRUE(s.ok()) << i << " " << s.ToString();
        ASSERT_EQ(FixtureRule::Value(i), v) << i;
      }
    }
    ASSERT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "list", &v).ok());
    EXPECT_EQ("x0,x1,x2,x3,x4", v);
    ASSERT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "wal-only", &v).ok());
    EXPECT_EQ("w", v);
    int live = 0;
    for (int i = 0; i < 3000; i++) live += FixtureRule::Live(i) ? 1 : 0;
    auto it = db_->NewIterator(ReadOptions(), db_->DefaultColumnFamily());
    int n = 0;
    for (it->Seek("key"); it->Valid() && it->key().substr(0, 3) == "key"; it->Next()) n++;
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    EXPECT_EQ(live + (keys - 3000), n);
  }
  // How many table files of the fixture's format and of today's the
  // database uses (the directory's before it is opened).
  std::pair<int, int> FormatCounts() {
    std::vector<std::string> names;
    if (db_ == nullptr) {
      EXPECT_TRUE(env_->GetChildren("/db", &names).ok());
    } else {
      std::vector<LiveFile> live;
      EXPECT_TRUE(db_->GetLiveFiles(false, &live).ok());
      for (const LiveFile& f : live) names.push_back(f.name);
    }
    std::pair<int, int> counts{0, 0};
    for (const std::string& n : names) {
      if (n.size() < 4 || n.substr(n.size() - 4) != ".sst") continue;
      std::string data;
      EXPECT_TRUE(env_->ReadFileToString("/db/" + n, &data).ok());
      Footer footer;
      EXPECT_TRUE(footer.DecodeFrom(std::string_view(data).substr(data.size() - kFooterSize)).ok()) << n;
      EXPECT_TRUE(footer.version == GetParam() || footer.version == kTableFormatVersion) << n << " " << footer.version;
      (footer.version == GetParam() ? counts.first : counts.second)++;
    }
    return counts;
  }

  std::unique_ptr<MemEnv> env_ = NewMemEnv();
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_P(FormatCompatTest, OldDatabaseReadsGrowsAndCompacts) {
  ASSERT_LT(GetParam(), kTableFormatVersion);
  ASSERT_GT(FormatCounts().first, 0) << "the fixture holds tables of its format";
  ASSERT_EQ(0, FormatCounts().second);
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_NO_FATAL_FAILURE(ExpectContents(3000));
  // New keys, and live old keys written again (the same value): the key
  // ranges overlap, so compaction merges old files with new ones.
  for (int i = 0; i < 4000; i += i < 3000 ? 3 : 1) {
    if (i < 3000 && !FixtureRule::Live(i)) continue;
    // Delete key 10: at least every older version's (the monotone contract).
    ASSERT_TRUE(db_->Put(WriteOptions(), db_->DefaultColumnFamily(), FixtureRule::Key(i), FixtureRule::Value(i), 10).ok());
  }
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_GT(FormatCounts().first, 0) << "old files are still read";
  EXPECT_GT(FormatCounts().second, 0) << "new files are of today's format";
  ExpectContents(4000);
  const int old_files = FormatCounts().first;
  Status compacted = db_->CompactAll();
  ASSERT_TRUE(compacted.ok()) << compacted.ToString();
  // Compaction rewrites what it merges (a trivial move keeps a file as it is).
  EXPECT_LT(FormatCounts().first, old_files);
  ExpectContents(4000);
  ASSERT_NO_FATAL_FAILURE(Open());
  ExpectContents(4000);
  // The horizon kept in the fixture's manifest still applies to new writes.
  ASSERT_TRUE(db_->Put(WriteOptions(), db_->DefaultColumnFamily(), "expired", "x", 0).ok());
  std::string v;
  EXPECT_TRUE(db_->Get(ReadOptions(), db_->DefaultColumnFamily(), "expired", &v).IsNotFound());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FormatCompatTest, ::testing::Values(1u, 2u, 3u),
                         [](const auto& info) { return "Format" + std::to_string(info.param); });

}  // namespace
}  // namespace lethe
