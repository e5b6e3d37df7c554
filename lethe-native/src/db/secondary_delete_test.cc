// Secondary deletes by delete key: horizons, delete-key ranges, page drops,
// hole punching, checkpoints.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>
#include <thread>
#include <chrono>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "lethe/db.h"
#include "lethe/env.h"
#include "lethe/memory_budget.h"
#include "sst/layout_printer.h"
#include "test_util.h"
#include "util/random.h"
#include "version/table_cache.h"

namespace lethe {
namespace {

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

TEST_F(SecondaryDeleteTest, HorizonHidesOlderMergeBaseAfterCompaction) {
  Put("k", "base", 5432);
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 5099).ok());
  Merge("k", "m1", 5712);
  ASSERT_TRUE(db_->Flush().ok());
  Reopen();
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 5709).ok());
  EXPECT_EQ("m1", Get("k"));
  EXPECT_EQ("k=m1 ", Scan());
  ASSERT_TRUE(db_->CompactAll().ok());
  EXPECT_EQ("m1", Get("k"));
  EXPECT_EQ("k=m1 ", Scan());
}

}  // namespace
}  // namespace lethe

namespace lethe {
namespace {

TEST_F(SecondaryDeleteTest, RangeDeleteRemovesOnlyOlderEntriesAndSnapshotsKeepTheirView) {
  Put("a", "1", 10);
  Put("b", "2", 20);
  Put("n", "never", kMaxDeleteKey);
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(db_->DeleteByDeleteKey(cf_, 5, kMaxDeleteKey).ok());
  Put("c", "3", 12);  // written after the delete: stays
  EXPECT_EQ("c=3 n=never ", Scan());
  EXPECT_EQ("a=1 b=2 n=never ", ScanAt(snap));
  EXPECT_EQ("1", Get("a", snap));
  db_->ReleaseSnapshot(snap);
  ASSERT_TRUE(db_->Flush().ok());
  Reopen();
  EXPECT_EQ("c=3 n=never ", Scan());
  ASSERT_TRUE(db_->CompactAll().ok());
  EXPECT_EQ("c=3 n=never ", Scan());
  EXPECT_TRUE(db_->DeleteByDeleteKey(cf_, 9, 3).IsInvalidArgument());
}

TEST_F(SecondaryDeleteTest, HorizonIsMonotoneAndHidesLaterWritesBelowIt) {
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 100).ok());
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 50).ok());  // ignored
  uint64_t h = 0;
  ASSERT_TRUE(db_->GetHorizon(cf_, &h).ok());
  EXPECT_EQ(100u, h);
  Put("late", "x", 99);
  Put("live", "y", 100);
  EXPECT_EQ("NOT_FOUND", Get("late"));
  EXPECT_EQ("live=y ", Scan());
  Reopen();
  ASSERT_TRUE(db_->GetHorizon(cf_, &h).ok());
  EXPECT_EQ(100u, h);
  EXPECT_EQ("live=y ", Scan());
}

TEST_F(SecondaryDeleteTest, MemtableEntriesUnderTheHorizonNeverReachDisk) {
  for (int i = 0; i < 500; i++) Put("key" + std::to_string(1000 + i), std::string(50, 'v'), i < 400 ? 1 : 9);
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 5).ok());
  ASSERT_TRUE(db_->Flush().ok());
  DbStatistics st = db_->GetStatistics();
  uint64_t entries = 0;
  for (const auto& l : st.column_families[0].levels) entries += l.entries;
  EXPECT_EQ(100u, entries);  // only the live ones were written
  EXPECT_EQ(0u, st.pages_dropped);  // nothing was on disk to drop
  EXPECT_GT(st.secondary_bytes_compacted, 400u * 50);
}

// Point deletes with a delete key (window state cleared by its operator): the
// horizon removes the tombstone together with what it deletes, so a clear whose
// data is still in the memtable writes nothing to disk, and one whose data was
// flushed leaves no tombstone behind once its pages are gone.
TEST_F(SecondaryDeleteTest, TombstonesWithADeleteKeyLeaveWithTheirData) {
  auto stats = [this] {
    DbStatistics st = db_->GetStatistics();
    std::pair<uint64_t, uint64_t> entries_tombstones{0, 0};
    for (const auto& l : st.column_families[0].levels) {
      entries_tombstones.first += l.entries;
      entries_tombstones.second += l.point_tombstones;
    }
    return entries_tombstones;
  };
  // Cleared while still in the memtable.
  for (int i = 0; i < 300; i++) Put("mem" + std::to_string(1000 + i), std::string(50, 'v'), 7);
  for (int i = 0; i < 300; i++) ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "mem" + std::to_string(1000 + i), 7).ok());
  EXPECT_EQ("NOT_FOUND", Get("mem1000"));
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 8).ok());
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(std::make_pair(uint64_t{0}, uint64_t{0}), stats());

  // Flushed, then cleared: the tombstones reach disk with the data's delete
  // key, still delete it (also after a reopen), and leave with the horizon.
  for (int i = 0; i < 300; i++) Put("disk" + std::to_string(1000 + i), std::string(50, 'v'), 20);
  ASSERT_TRUE(db_->Flush().ok());
  for (int i = 0; i < 300; i += 2) ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "disk" + std::to_string(1000 + i), 20).ok());
  ASSERT_TRUE(db_->Flush().ok());
  EXPECT_EQ(150u, stats().second);
  Reopen();
  EXPECT_EQ("NOT_FOUND", Get("disk1000"));
  EXPECT_EQ(std::string(50, 'v'), Get("disk1001"));
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 21).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_EQ("", Scan());
  EXPECT_EQ(std::make_pair(uint64_t{0}, uint64_t{0}), stats());
  EXPECT_GT(db_->GetStatistics().pages_dropped, 0u);
}

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

// A horizon that moves on in small steps (TTL, windows) would rewrite every
// partly covered page at every step: a page waits until half of it is covered,
// or until it has waited a quarter of D_th (then the rewrite, not a compaction
// of the whole file, meets FADE's deadline).
TEST_F(SecondaryDeleteTest, PartlyCoveredPagesWaitForCoverageOrAQuarterOfTheThreshold) {
  ManualClock clock(1'000'000);
  options_.clock = &clock;
  options_.cf_defaults.delete_persistence_threshold_us = 4'000'000;
  // One page a tile (no sorting by delete key across pages), ~90 entries a page: every page's
  // delete keys spread over all of 0..99.
  options_.cf_defaults.page_size = 4096;
  options_.cf_defaults.pages_per_tile = 1;
  OpenNewDatabase();
  PutKeys(4000, [](int i) { return (i * 37) % 100; });  // every page spans 0..99
  ASSERT_TRUE(db_->CompactAll().ok());
  // Pages rewritten, or files compacted alone because every page would have been.
  auto rewritten = [&] {
    const DbStatistics st = db_->GetStatistics();
    return st.pages_rewritten + st.compactions_page_rewrite;
  };
  // A one-off delete rewrites its partly covered pages at once.
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 1).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  const uint64_t once = rewritten();
  EXPECT_GT(once, 0u);
  // A horizon that keeps moving: pages wait.
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 10).ok());  // a tenth of every page
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_EQ(once, rewritten());
  EXPECT_GT(db_->GetStatistics().partially_covered_pages, 0u);
  EXPECT_EQ("NOT_FOUND", Get("key000000"));  // hidden all the same
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 20).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_EQ(once, rewritten());
  // A quarter of D_th later, the periodic wake-up rewrites them.
  clock.Advance(1'000'001);
  for (int i = 0; i < 500 && rewritten() == once; i++) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GT(rewritten(), once);
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  // Half covered: at once, while still moving.
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 30).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());  // that pass done before the baseline
  const uint64_t before = rewritten();
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 70).ok());  // 40 of the remaining 70 delete keys
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_GT(rewritten(), before);
  EXPECT_EQ("NOT_FOUND", Get("key000001"));  // delete key 37
  EXPECT_EQ(std::string(40, 'v'), Get("key000002"));  // delete key 74
}

TEST_F(PageDropTest, FullPagesAreDroppedWithoutIoAndTheirHolesPunched) {
  Load();
  DbStatistics before = db_->GetStatistics();
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 1).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  DbStatistics after = db_->GetStatistics();
  EXPECT_GT(after.pages_dropped, 0u);
  EXPECT_GT(after.page_bytes_dropped, 0u);
  // The partly covered page of each tile was rewritten into a patch table:
  // only those pages were read.
  EXPECT_GT(after.pages_rewritten, 0u);
  EXPECT_GT(after.rewrite_bytes_written, 0u);
  // Dropped and rewritten pages alike are released (MemEnv punches holes;
  // nothing else links the files).
  ExpectAllPunched(after);
  EXPECT_GT(after.bytes_punched, 0u);
  // No page was read or written for the drop.
  EXPECT_EQ(before.bytes_written_compaction, after.bytes_written_compaction);
  EXPECT_EQ(before.bytes_read_compaction, after.bytes_read_compaction);
  EXPECT_EQ(before.bytes_written_flush, after.bytes_written_flush);
  const uint64_t live = 4000 - (4000 + 6) / 7;
  EXPECT_EQ(live, Live());
  Reopen();  // the drops are in the manifest; dropped pages are never read (they are zeros now)
  EXPECT_EQ(live, Live());
  ASSERT_TRUE(db_->CompactAll().ok());
  EXPECT_EQ(live, Live());
}

TEST_F(PageDropTest, CheckpointTakenBeforeADropKeepsItsData) {
  Load();
  ASSERT_TRUE(db_->Checkpoint("/ckpt").ok());
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 3).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  DbStatistics st = db_->GetStatistics();
  EXPECT_GT(st.pages_dropped, 0u);
  EXPECT_EQ(0u, st.bytes_punched);  // the checkpoint's hard links share the files
  {
    std::unique_ptr<DB> copy;
    ASSERT_TRUE(DB::Open(options_, "/ckpt", &copy).ok());
    EXPECT_EQ(4000u, CountEntries(copy.get()));
  }
  ASSERT_TRUE(DestroyDB("/ckpt", options_).ok());
  // With the links gone, the next cleanup punches the holes.
  Put("zzz", "x", 9);
  ASSERT_TRUE(db_->Flush().ok());
  st = db_->GetStatistics();
  ExpectAllPunched(st);
  EXPECT_GT(st.bytes_punched, 0u);
  uint64_t live = 0;
  for (int i = 0; i < 4000; i++) live += i % 7 >= 3 ? 1 : 0;
  EXPECT_EQ(live + 1, Live());
}

// A checkpoint leaves out the files whose every entry lies under the horizon:
// its copy reads the latest state, which sees none of them, also while a
// snapshot of the database still holds them here. A file holding a range
// tombstone stays, since the tombstone deletes entries of deeper files.
TEST_F(SecondaryDeleteTest, CheckpointLeavesOutFilesUnderTheHorizon) {
  auto put_keys = [&](char prefix, uint64_t dk) {
    for (int i = 0; i < 100; i++) Put(prefix + std::to_string(1000 + i), std::string(40, prefix), dk);
  };
  auto tables_in = [&](const std::string& dir) {
    std::vector<std::string> children;
    EXPECT_TRUE(env_->GetChildren(dir, &children).ok());
    return std::count_if(children.begin(), children.end(),
                         [](const std::string& c) { return c.size() > 4 && c.substr(c.size() - 4) == ".sst"; });
  };
  put_keys('b', 10);
  ASSERT_TRUE(db_->Flush().ok());
  put_keys('a', 1);  // all under the horizon below
  ASSERT_TRUE(db_->Flush().ok());
  put_keys('c', 2);  // under it too, but with a range tombstone over half of the b keys
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf_, "b1000", "b1050").ok());
  ASSERT_TRUE(db_->Flush().ok());
  const Snapshot* before = db_->GetSnapshot();  // keeps the database from dropping the a file
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 5).ok());
  const std::string latest = Scan();
  ASSERT_TRUE(db_->Checkpoint("/ckpt").ok());
  EXPECT_EQ(3, tables_in("/db"));
  EXPECT_EQ(2, tables_in("/ckpt"));
  {
    std::unique_ptr<DB> copy;
    ASSERT_TRUE(DB::Open(options_, "/ckpt", &copy).ok());
    EXPECT_EQ(latest, ScanOf(copy.get()));
    EXPECT_EQ(50u, CountEntries(copy.get()));
  }
  const std::string at_snapshot = ScanAt(before);
  EXPECT_EQ(250, std::count(at_snapshot.begin(), at_snapshot.end(), '='));
  db_->ReleaseSnapshot(before);
}

TEST_F(PageDropTest, PatchTablesAreLiveFilesAndTravelWithCheckpoints) {
  Load();
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 1).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  ASSERT_GT(db_->GetStatistics().pages_rewritten, 0u);
  std::string files;
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.files", &files));
  std::vector<std::string> patches;
  for (size_t at = files.find("patch=#"); at != std::string::npos; at = files.find("patch=#", at + 1)) {
    patches.push_back(TableFileName("", std::stoull(files.substr(at + 7))).substr(1));
  }
  ASSERT_FALSE(patches.empty()) << files;
  std::vector<LiveFile> live;
  ASSERT_TRUE(db_->GetLiveFiles(false, &live).ok());
  for (const std::string& p : patches) {
    EXPECT_TRUE(std::any_of(live.begin(), live.end(), [&](const LiveFile& f) { return f.name == p && f.immutable; }))
        << p << " missing from the live files";
  }
  const uint64_t expected = Live();
  ASSERT_TRUE(db_->Checkpoint("/ckpt").ok());
  db_.reset();
  ASSERT_TRUE(DestroyDB("/db", options_).ok());  // the copy must stand alone
  std::unique_ptr<DB> copy;
  ASSERT_TRUE(DB::Open(options_, "/ckpt", &copy).ok());
  EXPECT_EQ(expected, CountEntries(copy.get()));
}

// The table files in /db.
std::vector<std::string> TableFiles(Env* env) {
  std::vector<std::string> children, tables;
  EXPECT_TRUE(env->GetChildren("/db", &children).ok());
  for (const std::string& c : children) {
    if (c.ends_with(".sst")) tables.push_back(c);
  }
  return tables;
}

// Pending punches end with the process, and a restored copy of a file has
// the bytes of its dropped pages back: opening punches them again.
TEST_F(PageDropTest, OpeningPunchesThePagesNoRecordReads) {
  Load();
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 1).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  const uint64_t punched = db_->GetStatistics().bytes_punched;
  ASSERT_GT(punched, 0u);
  const uint64_t live = Live();
  db_.reset();
  for (const std::string& name : TableFiles(env_.get())) {  // written whole, as a restore writes them
    std::string data;
    ASSERT_TRUE(env_->ReadFileToString("/db/" + name, &data).ok());
    ASSERT_TRUE(env_->RemoveFile("/db/" + name).ok());
    ASSERT_TRUE(env_->WriteStringToFile("/db/" + name, data).ok());
  }
  Reopen();
  EXPECT_EQ(punched, db_->GetStatistics().bytes_punched);
  EXPECT_EQ(live, Live());
  Reopen();  // the holes are there already
  EXPECT_EQ(0u, db_->GetStatistics().bytes_punched);
  EXPECT_EQ(live, Live());
}

// With one page per tile, a horizon that covers part of every page takes
// every page of each file. In the last levels, each file is compacted alone
// (full pages, no patch table); in level 0 (where a compaction's outputs
// would lose the file's place) each page is patched, and the patch table, a
// table in its own right, takes the file's place: the file does not stay,
// with its index and filters, next to its patch.
class WholeFileRewriteTest : public PageDropTest, public ::testing::WithParamInterface<bool> {};

TEST_P(WholeFileRewriteTest, APageDropThatWouldRewriteEveryPageLeavesNoFileBehind) {
  const bool level0 = GetParam();
  options_.cf_defaults.pages_per_tile = 1;
  OpenNewDatabase();
  PutKeys(4000, [](int i) { return i % 7; }, 0);  // every page holds delete keys 0..6
  ASSERT_TRUE(level0 ? db_->Flush().ok() : db_->CompactAll().ok());
  std::string files;
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.files", &files));
  ASSERT_EQ(level0, files.find("L0 ") != std::string::npos) << files;
  const size_t file_count = TableFiles(env_.get()).size();
  ASSERT_GT(file_count, 1u);
  // The second round (half of each page: rewritten at once though the
  // horizon moves) takes the replacements' pages in turn.
  const std::pair<uint64_t, uint64_t> rounds[] = {{1, 4000 - 572}, {4, 4000 - 3 * 572 - 571}};
  for (size_t round = 0; round < 2; round++) {
    ASSERT_TRUE(db_->AdvanceHorizon(cf_, rounds[round].first).ok());
    ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
    const DbStatistics st = db_->GetStatistics();
    EXPECT_EQ(level0 ? file_count * (round + 1) : 0, st.files_replaced_by_patch);
    EXPECT_EQ(level0 ? 0 : file_count * (round + 1), st.compactions_page_rewrite);
    EXPECT_EQ(level0, st.pages_rewritten > 0);
    ASSERT_TRUE(db_->GetProperty(cf_, "lethe.files", &files));
    EXPECT_EQ(std::string::npos, files.find("patch=#")) << files;
    EXPECT_GE(file_count, TableFiles(env_.get()).size());  // nothing left behind
    EXPECT_EQ(rounds[round].second, Live());
    EXPECT_EQ("NOT_FOUND", Get("key000007"));
    EXPECT_EQ(std::string(40, 'a' + 5), Get("key000005"));
  }
  EXPECT_EQ(0u, db_->GetStatistics().bytes_punched);  // nothing to punch: the files went whole
  const uint64_t live = Live();
  Reopen();
  EXPECT_EQ(live, Live());
  ASSERT_TRUE(db_->Checkpoint("/ckpt").ok());
  std::unique_ptr<DB> copy;
  ASSERT_TRUE(DB::Open(options_, "/ckpt", &copy).ok());
  EXPECT_EQ(live, CountEntries(copy.get()));
  ASSERT_TRUE(db_->CompactAll().ok());
  EXPECT_EQ(live, Live());
}

INSTANTIATE_TEST_SUITE_P(Levels, WholeFileRewriteTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "level0" : "deeper"; });

// With several pages per tile sorted on uncorrelated delete keys, the pages
// of one tile overlap in sort key, and so do their patches: such a patch
// table is no table of its own, and the file stays with its patch.
TEST_F(PageDropTest, PatchesOfOverlappingPagesDoNotReplaceTheirFile) {
  options_.cf_defaults.pages_per_tile = 2;
  OpenNewDatabase();
  PutKeys(4000, [](int i) { return (i * 37) % 100; }, 0);  // a tile's first page: its lower delete keys
  ASSERT_TRUE(db_->CompactAll().ok());
  // Each delete touches one page of a tile: the first patches the lower
  // pages, the second the upper ones.
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 1).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  ASSERT_TRUE(db_->DeleteByDeleteKey(cf_, 99, 99).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  ASSERT_GT(db_->GetStatistics().pages_rewritten, 0u);
  EXPECT_EQ(0u, db_->GetStatistics().files_replaced_by_patch);
  std::string files;
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.files", &files));
  EXPECT_NE(std::string::npos, files.find("patch=#")) << files;
  EXPECT_EQ(3920u, Live());
  EXPECT_EQ("NOT_FOUND", Get("key000000"));  // delete key 0
  EXPECT_EQ("NOT_FOUND", Get("key000027"));  // delete key 99
  EXPECT_EQ(std::string(40, 'a' + 1), Get("key000001"));  // delete key 37
  Reopen();
  EXPECT_EQ(3920u, Live());
}

// Patch tables stay open as their files' tables do. When tables stay open
// beyond the room of the budget's table cache, a patch table charged to that
// cache would leave it at once, and every read of its file open it again.
TEST_F(PageDropTest, PatchTablesStayOpenWhenPinnedTablesOutgrowTheTableCache) {
  std::shared_ptr<MemoryBudget> budget;
  ASSERT_TRUE(MemoryBudget::New(256 * 1024, 0.5, &budget).ok());  // a table cache of 96 KiB
  options_.memory_budget = budget;
  options_.cf_defaults.page_size = 512;
  options_.cf_defaults.index_partition_size = 0;  // readers keep their whole index: large
  OpenNewDatabase();
  PutKeys(20000, [](int i) { return i % 7; }, 0);
  ASSERT_TRUE(db_->CompactAll().ok());
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 1).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  ASSERT_GT(db_->GetStatistics().pages_rewritten, 0u);
  const uint64_t live = Live();  // opens every table and patch table
  ASSERT_GT(budget->GetUsage().pinned_table_readers, 96 * 1024u);
  const uint64_t opens = db_->GetStatistics().table_opens;
  EXPECT_EQ(live, Live());
  EXPECT_EQ(live, Live());
  EXPECT_EQ(opens, db_->GetStatistics().table_opens);
}

// An iterator reads the file as its version describes it. Two drops in a row
// give the file three records (none dropped, some, more); the second drop's
// holes must wait for every reader of a record that still reads those pages,
// not only for the record the drop replaced. (The model test found this as a
// rare "block checksum mismatch ... all zero" in a scan.)
TEST_F(PageDropTest, AReaderOfAnOlderFileRecordKeepsPagesOfLaterDropsWhole) {
  Load();
  auto it = db_->NewIterator(ReadOptions(), cf_);  // reads nothing until positioned
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 1).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  const uint64_t first = db_->GetStatistics().pages_dropped;
  EXPECT_GT(first, 0u);
  EXPECT_EQ(0u, db_->GetStatistics().bytes_punched);  // the iterator reads them
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 4).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_GT(db_->GetStatistics().pages_dropped, first);
  EXPECT_EQ(0u, db_->GetStatistics().bytes_punched);
  uint64_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  EXPECT_EQ(4000u, n);  // its version predates both horizons
  it.reset();
  // With the iterator gone, the next cleanup punches the holes (a page
  // patched by the first drop and dropped by the second is punched once).
  Put("zzz", "x", 9);
  ASSERT_TRUE(db_->Flush().ok());
  DbStatistics st = db_->GetStatistics();
  EXPECT_GT(st.bytes_punched, 0u);
  EXPECT_LE(st.bytes_punched, st.page_bytes_dropped + st.rewrite_bytes_read);
  uint64_t live = 1;
  for (int i = 0; i < 4000; i++) live += i % 7 >= 4 ? 1 : 0;
  EXPECT_EQ(live, Live());
  Reopen();
  EXPECT_EQ(live, Live());
}

// Another family that nobody writes (a Flink state not touched for a while)
// must not hold an old version, and with it the holes, until the next flush.
TEST_F(PageDropTest, AnIdleFamilyDoesNotDelayTheHoles) {
  ColumnFamilyHandle* idle = nullptr;
  ASSERT_TRUE(db_->CreateColumnFamily("idle", options_.cf_defaults, &idle).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), idle, "a", "b").ok());
  Load();  // flushes both families, then compacts each
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 1).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  DbStatistics st = db_->GetStatistics();
  EXPECT_GT(st.pages_dropped, 0u);
  ExpectAllPunched(st);
  EXPECT_GT(st.bytes_punched, 0u);
  std::string v;
  ASSERT_TRUE(db_->Get(ReadOptions(), idle, "a", &v).ok());
  EXPECT_EQ("b", v);
}

// Compressed pages are not aligned to blocks: a run of dropped pages frees
// the whole blocks inside it, and the statistic counts only those. Values of
// random words compress about 2-3x, so a tile's run of dropped pages spans
// whole 4 KiB blocks.
TEST_F(PageDropTest, CompressedPagesFreeTheWholeBlocksOfTheirRuns) {
  options_.cf_defaults.compression = Compression::kLZ4;
  OpenNewDatabase();
  const char* words[] = {"alpha ", "beta ", "gamma ", "delta ", "epsilon ", "zeta ", "eta ", "theta "};
  Random rnd(17);
  uint64_t raw = 0;
  for (int i = 0; i < 4000; i++) {
    char key[16];
    std::snprintf(key, sizeof(key), "key%06d", i);
    std::string value;
    while (value.size() < 200) value += words[rnd.Uniform(8)];
    raw += 17 + value.size();
    Put(key, value, static_cast<uint64_t>(i % 7));
  }
  ASSERT_TRUE(db_->CompactAll().ok());
  const uint64_t stored = db_->GetStatistics().live_bytes;
  EXPECT_LT(stored, raw * 2 / 3) << "the pages are compressed";
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 5).ok());  // five delete keys in seven: long runs of pages
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  DbStatistics st = db_->GetStatistics();
  EXPECT_GT(st.pages_dropped, 0u);
  EXPECT_GT(st.bytes_punched, 0u);
  ExpectAllPunched(st);
  uint64_t live = 0;
  for (int i = 0; i < 4000; i++) live += i % 7 >= 5 ? 1 : 0;
  EXPECT_EQ(live, Live());
}

TEST_F(PageDropTest, SnapshotDelaysTheDropUntilReleased) {
  Load();
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 1).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_EQ(0u, db_->GetStatistics().pages_dropped);
  ReadOptions ro;
  ro.snapshot = snap;
  uint64_t n = 0;
  auto it = db_->NewIterator(ro, cf_);
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_EQ(4000u, n);
  it.reset();
  db_->ReleaseSnapshot(snap);
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  EXPECT_GT(db_->GetStatistics().pages_dropped, 0u);
}

// Where the allocator's count of bytes in use is glibc's own (a sanitizer's
// replacement keeps its own books).
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// The most bytes in use (mallinfo2) seen by a thread of its own from
// construction until Stop().
class InUsePeak {
 public:
  InUsePeak() : thread_([this] {
    while (!stop_.load()) {
      peak_ = std::max(peak_, mallinfo2().uordblks);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }) {}
  size_t Stop() {
    stop_.store(true);
    thread_.join();
    return peak_;
  }

 private:
  std::atomic<bool> stop_{false};
  size_t peak_ = 0;
  std::thread thread_;
};

// A page drop writes each partly covered page's survivors to the patch table
// as it reads the page: it never holds the survivors of the whole file (here
// 10,000 entries of 200 bytes; it held them all, 5.2 MB in use, before). The files are on disk, so that the tables'
// bytes are not in memory either. The file stays in level 0, where a file
// whose every page is rewritten is patched, not compacted alone.
TEST(PageDropMemoryTest, RewritesHoldOnePageAtATime) {
  const std::string dir = ::testing::TempDir() + "/lethe_page_drop_memory_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  Options o;
  o.env = Env::Default();
  o.background_compactions = false;
  o.write_buffer_size = 64u << 20;
  o.cf_defaults.page_size = 4096;
  o.cf_defaults.pages_per_tile = 1;  // every page holds every delete key: all partly covered
  o.cf_defaults.target_file_size = 64u << 20;
  o.cf_defaults.compression = Compression::kNone;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(o, dir, &db).ok());
  ColumnFamilyHandle* cf = db->DefaultColumnFamily();
  for (int i = 0; i < 40000; i++) {
    char key[16];
    std::snprintf(key, sizeof(key), "key%06d", i);
    ASSERT_TRUE(db->Put(WriteOptions(), cf, key, std::string(200, static_cast<char>('a' + i % 26)), i % 4).ok());
  }
  ASSERT_TRUE(db->Flush().ok());
  const size_t before = mallinfo2().uordblks;
  InUsePeak peak;
  ASSERT_TRUE(db->AdvanceHorizon(cf, 3).ok());  // three quarters of each page below it
  ASSERT_TRUE(db->WaitForBackgroundWork().ok());
  const size_t top = peak.Stop();
  const size_t held = top > before ? top - before : 0;
  const DbStatistics st = db->GetStatistics();
  EXPECT_GE(st.pages_rewritten, 2000u);
  // Less than the survivors' own bytes; the patch table's index and filters
  // and the job's page list grow with the pages, not with their entries.
  const size_t survivors = 10000 * (200 + 9 + 8);
  EXPECT_LT(held, survivors) << "survivors of the whole file held at once";
  uint64_t live = 0;
  auto it = db->NewIterator(ReadOptions(), cf);
  for (it->SeekToFirst(); it->Valid(); it->Next()) live++;
  EXPECT_EQ(10000u, live);
  it.reset();
  db.reset();
  std::filesystem::remove_all(dir);
}
#endif

}  // namespace
}  // namespace lethe

namespace lethe {
namespace {

TEST_F(SecondaryDeleteTest, AutoTileSizeFollowsLookupsAndSecondaryDeletes) {
  ColumnFamilyOptions auto_h = options_.cf_defaults;
  auto_h.pages_per_tile = kPagesPerTileAuto;
  ASSERT_TRUE(db_->CreateColumnFamily("auto", auto_h, &cf_).ok());
  auto h = [&] { return db_->GetStatistics().column_families[1].pages_per_tile; };
  for (int i = 0; i < 3000; i++) Put("key" + std::to_string(i), std::string(50, 'v'), static_cast<uint64_t>(i));
  ASSERT_TRUE(db_->CompactAll().ok());
  EXPECT_EQ(1u, h()) << "no secondary deletes yet: the classic layout";
  for (uint64_t t = 1; t <= 20; t++) ASSERT_TRUE(db_->AdvanceHorizon(cf_, t).ok());
  const uint64_t with_deletes = h();
  EXPECT_GT(with_deletes, 1u);
  for (int i = 0; i < 20000; i++) Get("key" + std::to_string(i % 3000));
  EXPECT_LT(h(), with_deletes) << "lookups make large tiles costlier";
}

}  // namespace
}  // namespace lethe

namespace lethe {
namespace {

// The family's only table file as "lethe.files" describes it.
struct FileView {
  std::string file, patch;  // paths; patch empty without one
  std::vector<uint32_t> dropped, patched;
};
FileView DescribeFile(DB* db) {
  std::string files;
  EXPECT_TRUE(db->GetProperty(db->DefaultColumnFamily(), "lethe.files", &files));
  EXPECT_GE(1, std::count(files.begin(), files.end(), '\n')) << files;
  FileView v;
  if (files.empty()) return v;
  v.file = TableFileName("/db", std::stoull(files.substr(files.find('#') + 1)));
  auto list = [&](const std::string& name) {
    std::vector<uint32_t> pages;
    size_t at = files.find(name + "=[");
    if (at == std::string::npos) return pages;
    std::string rest = files.substr(at + name.size() + 2);
    std::stringstream in(rest.substr(0, rest.find(']')));
    for (std::string item; std::getline(in, item, ',');) pages.push_back(static_cast<uint32_t>(std::stoul(item)));
    return pages;
  };
  v.dropped = list("dropped");
  v.patched = list("patched");
  size_t patch = files.find("patch=#");
  if (patch != std::string::npos) v.patch = TableFileName("/db", std::stoull(files.substr(patch + 7)));
  return v;
}

// Golden layout: a file of delete tiles with 4 pages each, delete keys
// uncorrelated with the sort keys, before and after secondary deletes.
// Regenerate with LETHE_UPDATE_GOLDEN=1.
TEST_F(SecondaryDeleteTest, GoldenLayoutBeforeAndAfterPageDrops) {
  options_.cf_defaults.page_size = 64;
  options_.cf_defaults.pages_per_tile = 4;
  db_.reset();
  ASSERT_TRUE(DestroyDB("/db", options_).ok());
  Reopen();
  const uint64_t dks[] = {40, 10, 30, 20, 50, 5, 25, 15};
  for (int i = 0; i < 32; i++) {
    char key[8];
    std::snprintf(key, sizeof(key), "k%02d", i);
    Put(key, "v" + std::to_string(i), dks[(i * 5) % 8]);
  }
  ASSERT_TRUE(db_->CompactAll().ok());
  const DbStatistics written = db_->GetStatistics();
  std::string layout;
  auto print = [&](const std::string& title) {
    FileView v = DescribeFile(db_.get());
    layout += "== " + title + "\n";
    if (v.file.empty()) {
      layout += "(no table file left)\n";
    } else {
      ASSERT_TRUE(PrintTableLayout(env_.get(), v.file, true, &layout, &v.dropped, &v.patched).ok());
      if (!v.patch.empty()) {
        layout += "patch table (its tile k replaces the k-th patched page):\n";
        ASSERT_TRUE(PrintTableLayout(env_.get(), v.patch, true, &layout).ok());
      }
    }
    layout += "reads: " + Scan() + "\n";
  };
  print("written");
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 21).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  print("after AdvanceHorizon(21): pages below 21 dropped, the partly covered page of each tile patched");
  ASSERT_TRUE(db_->DeleteByDeleteKey(cf_, 22, 45).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  print("after DeleteByDeleteKey(22, 45): a range drops only tiles it covers whole, none here");
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 26).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  print("after AdvanceHorizon(26)");
  ASSERT_TRUE(db_->DeleteByDeleteKey(cf_, 25, 50).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  print("after DeleteByDeleteKey(25, 50): tile 1 goes whole; tile 0's last own page would be rewritten, so the"
        " file is compacted alone, and its tombstones, with nothing older below, go");
  DbStatistics st = db_->GetStatistics();
  EXPECT_EQ(1u, st.compactions_page_rewrite);
  EXPECT_EQ(written.bytes_written_compaction, st.bytes_written_compaction);  // nothing was left to write
  EXPECT_GE(st.pages_dropped, 4u);
  EXPECT_GE(st.pages_rewritten, 2u);
  EXPECT_LT(st.rewrite_bytes_read, 1007u) << "only partly covered pages are read";
  ASSERT_TRUE(db_->CompactAll().ok());
  print("after CompactAll: tombstones with nothing older below are gone");

  ExpectMatchesGolden("kiwi_page_drops.txt", layout);
}

}  // namespace
}  // namespace lethe

namespace lethe {
namespace {

#ifdef LETHE_INVARIANT_CHECKS
// The monotone delete-key contract (db.h) is checked where versions of a key
// meet: a newer version with a smaller delete key stops the compaction.
TEST_F(SecondaryDeleteTest, MonotoneDeleteKeyContractIsCheckedInInvariantBuilds) {
  Put("k", "old", 10);
  ASSERT_TRUE(db_->Flush().ok());
  Put("k", "new", 5);
  Status s = db_->CompactAll();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(std::string::npos, s.ToString().find("delete key")) << s.ToString();
}

// A tombstone with a delete key below the version it deletes could leave
// before it and let the version resurface: a contract violation too.
TEST_F(SecondaryDeleteTest, TombstoneBelowTheDeleteKeyOfItsVersionIsAContractViolation) {
  Put("k", "old", 10);
  ASSERT_TRUE(db_->Flush().ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "k", 5).ok());
  Status s = db_->CompactAll();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}
#endif

}  // namespace
}  // namespace lethe
