// Secondary deletes by delete key: horizons, delete-key ranges, checkpoints,
// the page-drop layout walk-through (page_drop_test.cc: the page drops).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>
#include <thread>
#include <chrono>

#include "lethe/db.h"
#include "lethe/env.h"
#include "sst/layout_printer.h"
#include "secondary_delete_fixture.h"
#include "test_util.h"
#include "version/table_cache.h"

namespace lethe {
namespace {

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
