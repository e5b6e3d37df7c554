// Page drops: whole pages dropped by a manifest edit, partly covered pages
// patched, files compacted alone or replaced by their patch, holes punched.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "lethe/db.h"
#include "lethe/env.h"
#include "lethe/memory_budget.h"
#include "secondary_delete_fixture.h"
#include "util/random.h"
#include "util/sanitizers.h"
#include "version/table_cache.h"

namespace lethe {
namespace {

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
  EXPECT_GT(stored, raw / 20) << "live_bytes counts the files";
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

// A horizon advanced in steps frees, by its last step, the blocks one step
// to the same horizon frees: each punch covers the whole run of bytes the
// file no longer reads, earlier drops included, so a block shared by pages
// dropped in different steps is freed once both are gone. (Punching only
// each step's pages would free almost nothing: pages are not aligned to
// blocks, so one page of 4 KiB rarely holds a whole block.)
TEST_F(PageDropTest, AHorizonAdvancedInStepsFreesWhatOneStepFrees) {
  Load();
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 5).ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  const DbStatistics at_once = db_->GetStatistics();
  ExpectAllPunched(at_once);
  ASSERT_GT(at_once.bytes_punched, 0u);

  OpenNewDatabase();
  Load();
  std::vector<uint64_t> punched;
  for (uint64_t h = 1; h <= 5; h++) {
    ASSERT_TRUE(db_->AdvanceHorizon(cf_, h).ok());
    ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
    punched.push_back(db_->GetStatistics().bytes_punched);
  }
  EXPECT_EQ(at_once.bytes_punched, punched.back());
  EXPECT_LT(punched[0], punched[1]) << "the second step frees blocks the first step's pages share";
  uint64_t live = 0;
  for (int i = 0; i < 4000; i++) live += i % 7 >= 5 ? 1 : 0;
  EXPECT_EQ(live, Live());
  Reopen();  // opening punches every unread run again: nothing more to free
  EXPECT_EQ(0u, db_->GetStatistics().bytes_punched);
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
#if defined(__GLIBC__) && !LETHE_SANITIZER_ALLOCATOR
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
