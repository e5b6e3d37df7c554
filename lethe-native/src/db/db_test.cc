// Deterministic DB tests: basic operations, every kind of delete, merges,
// snapshots, reopen, crash recovery, checkpoints, column families, errors.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lethe/db.h"
#include "env/fault_injection_env.h"
#include "lethe/env.h"
#include "sst/compression.h"
#include "test_util.h"
#include "util/random.h"

namespace lethe {
namespace {

using DBTest = SmallFilesDbTest;

TEST_F(DBTest, PutGetDelete) {
  Put("a", "1");
  Put("b", "2");
  EXPECT_EQ(Get("a"), "1");
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "a").ok());
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_EQ(Get("b"), "2");
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_EQ(Get("b"), "2");
  EXPECT_EQ(Scan(), "b=2 ");
}

// The engine's threads carry names of their own, not the name of the thread
// that opened the database: two per open database, none once it is closed.
TEST_F(DBTest, BackgroundThreadsAreNamed) {
  auto count_named = [](const std::string& name) {
    int n = 0;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
      std::ifstream comm(task.path() / "comm");
      std::string line;
      if (std::getline(comm, line) && line == name) n++;
    }
    return n;
  };
  EXPECT_EQ(1, count_named("lethe-flush"));
  EXPECT_EQ(1, count_named("lethe-compact"));
  db_.reset();
  EXPECT_EQ(0, count_named("lethe-flush"));
  EXPECT_EQ(0, count_named("lethe-compact"));
  Reopen();
}

TEST_F(DBTest, DeleteKeyIsReturned) {
  Put("k", "v", 1234);
  uint64_t dk = 0;
  std::string v;
  ASSERT_TRUE(db_->Get(ReadOptions(), cf_, "k", &v, &dk).ok());
  EXPECT_EQ(dk, 1234u);
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->Get(ReadOptions(), cf_, "k", &v, &dk).ok());
  EXPECT_EQ(dk, 1234u);
  auto it = db_->NewIterator(ReadOptions(), cf_);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->delete_key(), 1234u);
}

TEST_F(DBTest, MergeAppendsAcrossFlushes) {
  ASSERT_TRUE(db_->Merge(WriteOptions(), cf_, "l", "a").ok());
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->Merge(WriteOptions(), cf_, "l", "b").ok());
  EXPECT_EQ(Get("l"), "a,b");
  Put("l", "x");
  ASSERT_TRUE(db_->Merge(WriteOptions(), cf_, "l", "c").ok());
  EXPECT_EQ(Get("l"), "x,c");
  ASSERT_TRUE(db_->CompactAll().ok());
  EXPECT_EQ(Get("l"), "x,c");
  EXPECT_EQ(Scan(), "l=x,c ");
}

TEST_F(DBTest, RangeDeleteHidesOlderDataOnly) {
  for (char c = 'a'; c <= 'h'; c++) Put(std::string(1, c), "old");
  ASSERT_TRUE(db_->Flush().ok());
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf_, "b", "f").ok());
  Put("c", "new");
  EXPECT_EQ(Get("b"), "NOT_FOUND");
  EXPECT_EQ(Get("c"), "new");
  EXPECT_EQ(Get("f"), "old");
  EXPECT_EQ(Scan(), "a=old c=new f=old g=old h=old ");
  ASSERT_TRUE(db_->CompactAll().ok());
  EXPECT_EQ(Scan(), "a=old c=new f=old g=old h=old ");
  EXPECT_EQ(Get("b", snap), "old");
  ReadOptions ro;
  ro.snapshot = snap;
  EXPECT_EQ(Scan(ro), "a=old b=old c=old d=old e=old f=old g=old h=old ");
  db_->ReleaseSnapshot(snap);
  ASSERT_TRUE(db_->CompactAll().ok());
  EXPECT_EQ(Scan(), "a=old c=new f=old g=old h=old ");
}

TEST_F(DBTest, IteratorBoundsAndSeek) {
  for (int i = 0; i < 100; i++) Put("k" + std::to_string(100 + i), std::to_string(i));
  ASSERT_TRUE(db_->Flush().ok());
  ReadOptions ro;
  ro.lower_bound = "k150";
  ro.has_lower_bound = true;
  ro.upper_bound = "k153";
  ro.has_upper_bound = true;
  EXPECT_EQ(Scan(ro), "k150=50 k151=51 k152=52 ");
  auto it = db_->NewIterator(ro, cf_);
  it->Seek("k000");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "k150");
  it->Seek("k1515");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "k152");
  it->Seek("k2");
  EXPECT_FALSE(it->Valid());
}

TEST_F(DBTest, ReopenKeepsEverything) {
  std::map<std::string, std::string> model;
  for (int i = 0; i < 3000; i++) {
    std::string k = "key" + std::to_string(i * 7919 % 1000);
    std::string v(50 + i % 100, static_cast<char>('a' + i % 26));
    Put(k, v);
    model[k] = v;
    if (i % 5 == 0) {
      ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, k).ok());
      model.erase(k);
    }
  }
  Reopen();
  for (const auto& [k, v] : model) EXPECT_EQ(Get(k), v) << k;
  std::string expect;
  for (const auto& [k, v] : model) expect.append(k).append("=").append(v).append(" ");
  EXPECT_EQ(Scan(), expect);
  ASSERT_TRUE(db_->CompactAll().ok());
  Reopen();
  EXPECT_EQ(Scan(), expect);
}

TEST_F(DBTest, CrashLosesNoSyncedWrite) {
  WriteOptions sync;
  sync.sync = true;
  for (int i = 0; i < 2000; i++) {
    ASSERT_TRUE(db_->Put(sync, cf_, "k" + std::to_string(i), std::string(100, 'x')).ok());
  }
  db_.reset();
  env_->SimulateCrash();
  Reopen();
  for (int i = 0; i < 2000; i++) EXPECT_EQ(Get("k" + std::to_string(i)), std::string(100, 'x'));
}

TEST_F(DBTest, EstimateNumKeysCountsMemtablesAndFiles) {
  std::string n;
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.estimate-num-keys", &n));
  EXPECT_EQ("0", n);
  for (int i = 0; i < 100; i++) Put("k" + std::to_string(i), "v");
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.estimate-num-keys", &n));
  EXPECT_EQ("100", n);
  ASSERT_TRUE(db_->Flush().ok());
  for (int i = 100; i < 150; i++) Put("k" + std::to_string(i), "v");
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.estimate-num-keys", &n));
  EXPECT_EQ("150", n);
  for (int i = 0; i < 10; i++) ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "k" + std::to_string(i)).ok());
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.estimate-num-keys", &n));
  EXPECT_EQ("140", n);
}

TEST_F(DBTest, OldestDeleteKeyIsTheSmallestOfTheFilesPages) {
  std::string v;
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.oldest-delete-key", &v));
  EXPECT_EQ(std::to_string(kMaxDeleteKey), v);
  for (uint64_t d = 50; d < 100; d++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), cf_, "k" + std::to_string(d), "v", d).ok());
  }
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.oldest-delete-key", &v));
  EXPECT_EQ(std::to_string(kMaxDeleteKey), v) << "memtables do not count: the disk holds nothing yet";
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), cf_, "a", "v", 7).ok());
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.oldest-delete-key", &v));
  EXPECT_EQ("7", v);
}

// SyncWal is a commit point for unsynced writes: those before it survive a
// crash, across memtable switches (several logs); those after it need not.
TEST_F(DBTest, SyncWalMakesEarlierWritesDurable) {
  for (int i = 0; i < 2000; i++) Put("k" + std::to_string(i), std::string(100, 'x'));
  ASSERT_TRUE(db_->SyncWal().ok());
  for (int i = 0; i < 50; i++) Put("late" + std::to_string(i), "y");
  db_.reset();
  env_->SimulateCrash();
  Reopen();
  for (int i = 0; i < 2000; i++) EXPECT_EQ(Get("k" + std::to_string(i)), std::string(100, 'x'));
  int late = 0;
  for (int i = 0; i < 50; i++) late += Get("late" + std::to_string(i)) == "y" ? 1 : 0;
  EXPECT_LT(late, 50) << "the crash lost nothing unsynced: the test proves nothing";
}

// A compaction's inputs leave the directory once its outputs are installed,
// not at some later flush or compaction: an idle database keeps only its
// live files on disk.
TEST_F(DBTest, CompactionInputsLeaveWhenReplaced) {
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 2000; i++) Put("key" + std::to_string(i), std::string(20, static_cast<char>('a' + round)));
    ASSERT_TRUE(db_->Flush().ok());
  }
  ASSERT_TRUE(db_->CompactAll().ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  std::vector<LiveFile> live;
  ASSERT_TRUE(db_->GetLiveFiles(false, &live).ok());
  auto is_table = [](const std::string& name) { return name.size() > 4 && name.substr(name.size() - 4) == ".sst"; };
  std::set<std::string> live_tables, on_disk;
  for (const LiveFile& f : live) {
    if (is_table(f.name)) live_tables.insert(f.name);
  }
  std::vector<std::string> children;
  ASSERT_TRUE(env_->GetChildren("/db", &children).ok());
  for (const std::string& c : children) {
    if (is_table(c)) on_disk.insert(c);
  }
  EXPECT_GT(live_tables.size(), 1u);
  EXPECT_EQ(on_disk, live_tables);
  EXPECT_EQ(Get("key1999"), std::string(20, 'd'));
}

TEST_F(DBTest, CheckpointIsIndependentCopy) {
  Put("a", "1");
  Put("b", "2");
  ASSERT_TRUE(db_->Checkpoint("/ckpt").ok());
  Put("a", "changed");
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "b").ok());
  ASSERT_TRUE(db_->CompactAll().ok());
  EXPECT_FALSE(db_->Checkpoint("/ckpt").ok());  // exists
  std::unique_ptr<DB> copy;
  ASSERT_TRUE(DB::Open(options_, "/ckpt", &copy).ok());
  std::string v;
  ASSERT_TRUE(copy->Get(ReadOptions(), copy->DefaultColumnFamily(), "a", &v).ok());
  EXPECT_EQ(v, "1");
  ASSERT_TRUE(copy->Get(ReadOptions(), copy->DefaultColumnFamily(), "b", &v).ok());
  EXPECT_EQ(v, "2");
  EXPECT_EQ(Get("a"), "changed");
}

TEST_F(DBTest, ColumnFamiliesAreSeparate) {
  ColumnFamilyHandle* other;
  ASSERT_TRUE(db_->CreateColumnFamily("other", ColumnFamilyOptions(), &other).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), other, "k", "in-other").ok());
  Put("k", "in-default");
  ASSERT_TRUE(db_->Flush().ok());
  Reopen();
  other = db_->GetColumnFamily("other");
  ASSERT_NE(other, nullptr);
  std::string v;
  ASSERT_TRUE(db_->Get(ReadOptions(), other, "k", &v).ok());
  EXPECT_EQ(v, "in-other");
  EXPECT_EQ(Get("k"), "in-default");
  ASSERT_TRUE(db_->DropColumnFamily(other).ok());
  EXPECT_TRUE(db_->Get(ReadOptions(), other, "k", &v).IsInvalidArgument());
  EXPECT_TRUE(db_->Put(WriteOptions(), other, "k", "v").IsInvalidArgument());
  Reopen();
  EXPECT_EQ(db_->GetColumnFamily("other"), nullptr);
  EXPECT_EQ(db_->ListColumnFamilies().size(), 1u);
}

TEST_F(DBTest, PagesPerTileIsEachFamilysOwnAcrossReopen) {
  ColumnFamilyOptions tiles;
  tiles.pages_per_tile = 8;
  ColumnFamilyHandle* other;
  ASSERT_TRUE(db_->CreateColumnFamily("tiles", tiles, &other).ok());
  std::string v;
  ASSERT_TRUE(db_->GetProperty(other, "lethe.pages-per-tile", &v));
  EXPECT_EQ("8", v);
  Reopen();  // the default family's options come from options_, the other's from its record
  ASSERT_TRUE(db_->GetProperty(db_->GetColumnFamily("tiles"), "lethe.pages-per-tile", &v));
  EXPECT_EQ("8", v);
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.pages-per-tile", &v));
  EXPECT_EQ(std::to_string(options_.cf_defaults.pages_per_tile), v);
}

TEST_F(DBTest, CompressionIsEachFamilysOwnAcrossReopen) {
  ColumnFamilyOptions zstd;
  zstd.compression = Compression::kZSTD;
  zstd.bottommost_compression = Compression::kNone;
  ColumnFamilyHandle* other;
  ASSERT_TRUE(db_->CreateColumnFamily("zstd", zstd, &other).ok());
  std::string v;
  ASSERT_TRUE(db_->GetProperty(other, "lethe.compression", &v));
  EXPECT_EQ("zstd,none", v);
  Reopen();
  ASSERT_TRUE(db_->GetProperty(db_->GetColumnFamily("zstd"), "lethe.compression", &v));
  EXPECT_EQ("zstd,none", v);
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.compression", &v));
  EXPECT_EQ(std::string(CompressionName(options_.cf_defaults.compression)) + "," +
                CompressionName(options_.cf_defaults.bottommost_compression.value_or(
                    options_.cf_defaults.compression)),
            v);
}

// Flushes write level 0 in flush_compression; a compaction out of level 0
// rewrites such a file in the family's compression, even where a move
// would do, and the option lasts across reopens.
TEST_F(DBTest, FlushCompressionStaysInLevelZero) {
  ColumnFamilyOptions raw;
  raw.flush_compression = Compression::kNone;
  ColumnFamilyHandle* flat;
  ColumnFamilyHandle* packed;
  ASSERT_TRUE(db_->CreateColumnFamily("flat", raw, &flat).ok());
  ASSERT_TRUE(db_->CreateColumnFamily("packed", ColumnFamilyOptions(), &packed).ok());
  for (ColumnFamilyHandle* cf : {flat, packed}) {
    for (int i = 0; i < 200; i++) {
      ASSERT_TRUE(db_->Put(WriteOptions(), cf, "key" + std::to_string(1000 + i), std::string(200, 'a' + i % 3)).ok());
    }
  }
  ASSERT_TRUE(db_->Flush().ok());
  auto bytes = [&](ColumnFamilyHandle* cf) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(cf, "lethe.total-bytes", &v));
    return std::stoull(v);
  };
  const uint64_t flushed = bytes(flat), compressed = bytes(packed);
  EXPECT_GT(flushed, 40'000u);  // 200 values of 200 bytes, as they are
  EXPECT_LT(compressed * 4, flushed);
  ASSERT_TRUE(db_->CompactAll().ok());
  EXPECT_LT(bytes(flat) * 4, flushed);  // rewritten in LZ4 below level 0
  std::string v;
  ASSERT_TRUE(db_->GetProperty(flat, "lethe.flush-compression", &v));
  EXPECT_EQ("none", v);
  ASSERT_TRUE(db_->GetProperty(packed, "lethe.flush-compression", &v));
  EXPECT_EQ("lz4", v);
  Reopen();
  ASSERT_TRUE(db_->GetProperty(db_->GetColumnFamily("flat"), "lethe.flush-compression", &v));
  EXPECT_EQ("none", v);
}

TEST_F(DBTest, InvalidArguments) {
  EXPECT_TRUE(db_->DeleteRange(WriteOptions(), cf_, "b", "a").IsInvalidArgument());
  EXPECT_TRUE(db_->Put(WriteOptions(), nullptr, "k", "v").IsInvalidArgument());
  WriteBatch bad;
  ASSERT_TRUE(bad.SetData(std::string("\0\0\0\0\0\0\0\0\1\0\0\0\7", 13)).ok());
  EXPECT_TRUE(db_->Write(WriteOptions(), bad).IsInvalidArgument());
  std::unique_ptr<DB> second;
  EXPECT_TRUE(DB::Open(options_, "/db", &second).IsBusy());
}

TEST_F(DBTest, MultiGetRefusesWhatItCannotReadInEveryStatus) {
  std::string_view keys[3] = {"a", "b", "a"};
  std::string values[3];
  Status statuses[3];
  db_->MultiGet(ReadOptions(), nullptr, 3, keys, values, statuses);
  for (const Status& s : statuses) EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  ColumnFamilyHandle* other = nullptr;
  ASSERT_TRUE(db_->CreateColumnFamily("other", ColumnFamilyOptions(), &other).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), other, "a", "1").ok());
  db_->MultiGet(ReadOptions(), other, 3, keys, values, statuses);
  EXPECT_TRUE(statuses[0].ok() && statuses[2].ok() && values[2] == "1");
  EXPECT_TRUE(statuses[1].IsNotFound());
  ASSERT_TRUE(db_->DropColumnFamily(other).ok());
  db_->MultiGet(ReadOptions(), other, 3, keys, values, statuses);
  for (const Status& s : statuses) EXPECT_TRUE(s.IsInvalidArgument()) << "dropped: " << s.ToString();
  db_->MultiGet(ReadOptions(), cf_, 0, nullptr, nullptr, nullptr);  // nothing to do
}

// A batch walks level 0's overlapping files and each deeper level once;
// every key (found, deleted, covered by a range tombstone, merged, absent,
// repeated) gets Get's answer, with and without helper threads.
TEST_F(DBTest, MultiGetWalksEveryLevelAsGetDoes) {
  for (int helpers : {0, 2}) {
    SCOPED_TRACE("helper threads " + std::to_string(helpers));
    options_.multi_get_threads = helpers;
    options_.background_compactions = false;
    DestroyDB("/db", options_);
    Reopen();
    auto key = [](int i) {
      char k[16];
      std::snprintf(k, sizeof(k), "k%05d", i);
      return std::string(k);
    };
    for (int i = 0; i < 3000; i++) Put(key(i), "base" + std::to_string(i));
    ASSERT_TRUE(db_->CompactAll().ok());  // deeper levels
    for (int i = 0; i < 3000; i += 7) Put(key(i), "l0a" + std::to_string(i));
    ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf_, key(1000), key(1400)).ok());
    ASSERT_TRUE(db_->Flush().ok());
    for (int i = 0; i < 3000; i += 11) ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, key(i)).ok());
    for (int i = 1; i < 3000; i += 13) ASSERT_TRUE(db_->Merge(WriteOptions(), cf_, key(i), "m").ok());
    ASSERT_TRUE(db_->Flush().ok());
    for (int i = 0; i < 3000; i += 17) Put(key(i), "mem" + std::to_string(i));  // in the memtable
    std::string l0, deeper;
    ASSERT_TRUE(db_->GetProperty(cf_, "lethe.num-files-at-level0", &l0));
    ASSERT_TRUE(db_->GetProperty(cf_, "lethe.num-files-at-level1", &deeper));
    ASSERT_EQ(l0, "2");
    ASSERT_NE(deeper, "0");
    // Batches of 100 random keys in [-50, 3050), some repeated.
    Random rnd(5);
    for (int b = 0; b < 60; b++) {
      std::vector<std::string> keys;
      for (int i = 0; i < 100; i++) {
        keys.push_back(i > 0 && rnd.OneIn(10) ? keys[rnd.Uniform(i)] : key(static_cast<int>(rnd.Uniform(3100)) - 50));
      }
      std::vector<std::string_view> views(keys.begin(), keys.end());
      std::vector<std::string> values(keys.size());
      std::vector<Status> statuses(keys.size());
      db_->MultiGet(ReadOptions(), cf_, keys.size(), views.data(), values.data(), statuses.data());
      for (size_t i = 0; i < keys.size(); i++) {
        const std::string got = statuses[i].IsNotFound() ? "NOT_FOUND" : statuses[i].ok() ? values[i] : statuses[i].ToString();
        ASSERT_EQ(got, Get(keys[i])) << keys[i];
      }
    }
  }
}

// Removing a compaction's inputs (slow for large files) holds up no writer
// or reader: the database mutex is released meanwhile.
TEST_F(DBTest, WritesGoOnWhileObsoleteFilesAreRemoved) {
  FaultInjectionEnv slow(env_.get());
  TableFileGate gate(&slow, TableFileGate::Op::kRemove);
  db_.reset();
  options_.env = &slow;
  options_.background_compactions = false;
  Reopen();
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < 500; i++) Put("k" + std::to_string(i), std::string(100, static_cast<char>('a' + round)));
    ASSERT_TRUE(db_->Flush().ok());
  }
  std::thread compaction([&] { EXPECT_TRUE(db_->CompactAll().ok()); });
  if (!gate.Await(std::chrono::seconds(30))) {
    gate.Release();
    compaction.join();
    FAIL() << "the compaction removed no input";
  }
  // The compaction's thread is inside a removal now.
  auto write = std::async(std::launch::async, [&] {
    Status s = db_->Put(WriteOptions(), cf_, "during", "removal");
    std::string v;
    if (s.ok()) s = db_->Get(ReadOptions(), cf_, "k7", &v);
    return s.ok() && v == std::string(100, 'b');
  });
  const bool done = write.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  gate.Release();
  compaction.join();
  ASSERT_TRUE(done) << "the write waited for the removal";
  EXPECT_TRUE(write.get());
  EXPECT_EQ(Get("during"), "removal");
  db_.reset();
  options_.env = env_.get();
}

TEST_F(DBTest, CorruptTableIsReportedNotCrashed) {
  for (int i = 0; i < 500; i++) Put("k" + std::to_string(i), std::string(100, 'v'));
  ASSERT_TRUE(db_->Flush().ok());
  std::vector<LiveFile> files;
  ASSERT_TRUE(db_->GetLiveFiles(false, &files).ok());
  db_.reset();
  for (const LiveFile& f : files) {
    if (!f.immutable) continue;
    std::string data;
    ASSERT_TRUE(env_->ReadFileToString("/db/" + f.name, &data).ok());
    data[100] ^= 0x55;
    ASSERT_TRUE(env_->WriteStringToFile("/db/" + f.name, data).ok());
  }
  Reopen();
  Status first_error;
  for (int i = 0; i < 500 && first_error.ok(); i++) {
    std::string v;
    Status s = db_->Get(ReadOptions(), cf_, "k" + std::to_string(i), &v);
    if (!s.ok()) first_error = s;
  }
  EXPECT_TRUE(first_error.IsCorruption()) << first_error.ToString();
  EXPECT_NE(first_error.message().find(".sst"), std::string::npos) << first_error.ToString();
}

TEST_F(DBTest, ManyWritesBuildLevels) {
  std::string value(200, 'v');
  for (int i = 0; i < 20000; i++) Put("key" + std::to_string(i * 31 % 20000), value);
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  DbStatistics st = db_->GetStatistics();
  ASSERT_EQ(st.column_families.size(), 1u);
  EXPECT_GT(st.column_families[0].levels.size(), 2u);
  EXPECT_GT(st.bytes_written_compaction, 0u);
  uint64_t level_bytes = 0;
  for (const LevelStatistics& l : st.column_families[0].levels) level_bytes += l.bytes;
  EXPECT_GT(level_bytes, 0u);
  EXPECT_EQ(st.live_bytes, level_bytes) << "live_bytes: every level's files";
  EXPECT_EQ(st.Get(Ticker::kLiveBytes), level_bytes);
  for (int i = 0; i < 20000; i += 97) EXPECT_EQ(Get("key" + std::to_string(i)), value);
  std::string stats;
  EXPECT_TRUE(db_->GetProperty(cf_, "lethe.stats", &stats));
  EXPECT_NE(stats.find("level"), std::string::npos);
}

}  // namespace
}  // namespace lethe

namespace lethe {
namespace {

TEST_F(DBTest, BlindDeletesAreNotWritten) {
  options_.avoid_blind_deletes = true;
  Reopen();
  auto skipped = [&] { return db_->GetStatistics().blind_deletes_skipped; };
  auto memtable_tombstones = [&] { return db_->GetStatistics().column_families[0].memtable_entries; };
  // Never written: nothing to delete, nothing written.
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "ghost").ok());
  EXPECT_EQ(skipped(), 1u);
  EXPECT_EQ(memtable_tombstones(), 0u);
  // In the memtable, in the same batch, or in a file: the tombstone is written.
  Put("m", "1");
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "m").ok());
  WriteBatch batch;
  batch.Put(cf_, "b", "1");
  batch.Delete(cf_, "b");
  ASSERT_TRUE(db_->Write(WriteOptions(), batch).ok());
  for (int i = 0; i < 200; i++) Put("f" + std::to_string(1000 + i), "v");
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "f1100").ok());
  EXPECT_EQ(skipped(), 1u);
  EXPECT_EQ(Get("m"), "NOT_FOUND");
  EXPECT_EQ(Get("b"), "NOT_FOUND");
  EXPECT_EQ(Get("f1100"), "NOT_FOUND");
  // Inside a file's key range but absent: its Bloom filters say so.
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "f1100x").ok());
  EXPECT_EQ(skipped(), 2u);
  EXPECT_EQ(Get("f1101"), "v");
}

// A delete of data that never left the memtable deletes nothing on disk: the
// flush drops it with the data (the files' Bloom filters say no older version
// exists). A delete of data in a file reaches the files.
TEST_F(DBTest, DeletesOfDataStillInMemoryNeverReachDisk) {
  auto file_tombstones = [&] {
    uint64_t n = 0;
    const DbStatistics st = db_->GetStatistics();  // kept alive while its levels are read
    for (const auto& l : st.column_families[0].levels) n += l.point_tombstones;
    return n;
  };
  for (int i = 0; i < 200; i++) Put("f" + std::to_string(1000 + i), "v");
  ASSERT_TRUE(db_->Flush().ok());
  for (int i = 0; i < 100; i++) Put("m" + std::to_string(1000 + i), "v");
  for (int i = 0; i < 100; i++) ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "m" + std::to_string(1000 + i)).ok());
  for (int i = 0; i < 10; i++) ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "f" + std::to_string(1000 + i)).ok());
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(file_tombstones(), 10u);
  EXPECT_EQ(Get("m1000"), "NOT_FOUND");
  EXPECT_EQ(Get("f1000"), "NOT_FOUND");
  EXPECT_EQ(Get("f1010"), "v");
  // A snapshot that still sees the data keeps data and tombstone.
  Put("s", "v");
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "s").ok());
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(Get("s", snap), "v");
  EXPECT_EQ(Get("s"), "NOT_FOUND");
  db_->ReleaseSnapshot(snap);
}

}  // namespace
}  // namespace lethe
