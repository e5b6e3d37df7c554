// Checkpoints copy the memtables into the copy instead of flushing them
// (DB::BeginCheckpoint): the database writes no file for a checkpoint, what
// dies in memory never reaches its files, the copy holds exactly what was
// written before the checkpoint began, the families' images may be written
// at once from several threads, and once the copies written since the
// last flush would reach a quarter of the write buffer the memtables go to
// files in the background, and the copy links those.
// Flushes and the copies' waits for them are timed.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lethe/db.h"
#include "test_util.h"

namespace lethe {
namespace {

class CheckpointImageTest : public MemDbTest {
 protected:
  void SetUp() override {
    options_.use_wal = false;
    options_.write_buffer_size = 4 << 20;
    Reopen();
  }

  static std::string Key(int i) { return "k" + std::to_string(100000 + i); }

  std::string RandomValue(size_t n) { return IncompressibleValue(rnd_, n); }

  std::unique_ptr<DB> OpenCopy(const std::string& dir) {
    std::unique_ptr<DB> copy;
    Status s = DB::Open(options_, dir, &copy);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return copy;
  }

  std::string CopyScan(const std::string& dir) {
    std::unique_ptr<DB> copy = OpenCopy(dir);
    return copy != nullptr ? ScanOf(copy.get()) : "";
  }

  // Whether the copy in dir opens and reads exactly `expected`, without an error.
  bool ReadsWhole(const std::string& dir, const std::string& expected) {
    std::unique_ptr<DB> copy;
    if (!DB::Open(options_, dir, &copy).ok()) return false;
    std::string r;
    auto it = copy->NewIterator(ReadOptions(), copy->DefaultColumnFamily());
    for (it->SeekToFirst(); it->Valid(); it->Next()) r.append(it->key()).append("=").append(it->value()).append(" ");
    return it->status().ok() && r == expected;
  }

  // Files, memtable entries and point tombstones in files, new data and
  // deletes of both in the memtable.
  void WriteMixedState() {
    for (int i = 0; i < 500; i++) Put(Key(i), "file" + std::to_string(i));
    ASSERT_TRUE(db_->Flush().ok());
    for (int i = 400; i < 900; i++) Put(Key(i), "mem" + std::to_string(i));
    for (int i = 0; i < 50; i++) ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, Key(i * 3)).ok());
    ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf_, Key(200), Key(250)).ok());
    ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf_, Key(600), Key(620)).ok());
  }

  // Reopens the database (memtables of 1 MiB) on an Env whose flushes stop
  // as they create their table file, until the returned gate is released.
  TableFileGate& ReopenWithGatedFlushes() {
    gated_env_ = std::make_unique<FaultInjectionEnv>(env_.get());
    flush_gate_ = std::make_unique<TableFileGate>(gated_env_.get(), TableFileGate::Op::kCreate, "/db/");
    options_.env = gated_env_.get();
    options_.write_buffer_size = 1 << 20;
    Reopen();
    return *flush_gate_;
  }

  // However a test ends, a held flush goes through and the database closes
  // before the Env it uses.
  void TearDown() override {
    if (flush_gate_ != nullptr) flush_gate_->Release();
    db_.reset();
  }

  std::mt19937_64 rnd_{42};
  std::unique_ptr<FaultInjectionEnv> gated_env_;
  std::unique_ptr<TableFileGate> flush_gate_;
};

TEST_F(CheckpointImageTest, MemtablesGoIntoTheCopyAndStayInMemory) {
  WriteMixedState();
  const std::string expected = Scan();
  const DbStatistics before = db_->GetStatistics();
  ASSERT_TRUE(db_->Checkpoint("/ckpt").ok());
  const DbStatistics after = db_->GetStatistics();
  EXPECT_EQ(after.flushes, before.flushes);
  EXPECT_EQ(after.bytes_written_flush, before.bytes_written_flush);
  EXPECT_GT(after.bytes_written_checkpoint_image, 0u);
  EXPECT_EQ(after.column_families[0].memtable_entries, before.column_families[0].memtable_entries);
  EXPECT_EQ(CopyScan("/ckpt"), expected);
  EXPECT_EQ(Scan(), expected);

  // The copy is a database of its own: writes to it stay there.
  std::unique_ptr<DB> copy = OpenCopy("/ckpt");
  ASSERT_TRUE(copy->Put(WriteOptions(), copy->DefaultColumnFamily(), Key(0), "copy").ok());
  EXPECT_EQ(Get(Key(0)), "NOT_FOUND");
}

TEST_F(CheckpointImageTest, TheCopyHoldsWhatWasWrittenBeforeItBegan) {
  WriteMixedState();
  const std::string at_begin = Scan();
  std::unique_ptr<PendingCheckpoint> pending;
  ASSERT_TRUE(db_->BeginCheckpoint("/ckpt", CheckpointOptions(), &pending).ok());
  // The database goes on: overwrites, deletes of both kinds, a flush.
  for (int i = 300; i < 700; i++) Put(Key(i), "after" + std::to_string(i));
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, Key(401)).ok());
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), cf_, Key(0), Key(100)).ok());
  ASSERT_TRUE(db_->Flush().ok());
  Put(Key(2000), "new");
  const std::string now = Scan();
  ASSERT_NE(now, at_begin);
  ASSERT_TRUE(pending->Finish().ok());
  EXPECT_TRUE(pending->Finish().IsInvalidArgument());
  pending.reset();  // finished: the copy stays
  EXPECT_EQ(CopyScan("/ckpt"), at_begin);
  EXPECT_EQ(Scan(), now);
}

// Each family's memtables are one image; distinct images are written at once
// from several threads, each naming its files, and Finish writes the rest.
TEST_F(CheckpointImageTest, ImagesAreWrittenAtOnceAndFinishWritesTheRest) {
  std::vector<ColumnFamilyHandle*> families{cf_};
  for (const char* name : {"a", "b", "c"}) {
    ColumnFamilyHandle* h = nullptr;
    ASSERT_TRUE(db_->CreateColumnFamily(name, options_.cf_defaults, &h).ok());
    families.push_back(h);
  }
  for (size_t f = 0; f < families.size(); f++) {
    for (int i = 0; i < 300; i++) {
      ASSERT_TRUE(db_->Put(WriteOptions(), families[f], Key(i), std::to_string(f) + RandomValue(50)).ok());
    }
  }
  ASSERT_TRUE(db_->Delete(WriteOptions(), families[1], Key(7)).ok());
  std::vector<std::string> expected;
  for (ColumnFamilyHandle* h : families) expected.push_back(ScanOf(db_.get(), ReadOptions(), h));
  std::unique_ptr<PendingCheckpoint> pending;
  ASSERT_TRUE(db_->BeginCheckpoint("/ckpt", CheckpointOptions(), &pending).ok());
  for (int i = 0; i < 100; i++) Put(Key(i), "after");  // the database goes on
  ASSERT_EQ(pending->ImageCount(), 4u);
  std::vector<std::vector<std::string>> files(3);
  std::vector<Status> results(3);
  std::vector<std::thread> writers;
  for (size_t i = 0; i < 3; i++) {
    writers.emplace_back([&, i] { results[i] = pending->WriteImage(i, &files[i]); });
  }
  for (std::thread& t : writers) t.join();
  for (size_t i = 0; i < 3; i++) {
    ASSERT_TRUE(results[i].ok()) << results[i].ToString();
    ASSERT_EQ(files[i].size(), 1u) << "image " << i;
    EXPECT_TRUE(env_->FileExists("/ckpt/" + files[i][0])) << files[i][0];
  }
  EXPECT_NE(files[0][0], files[1][0]);
  EXPECT_TRUE(pending->WriteImage(1, nullptr).IsInvalidArgument());  // at most once
  EXPECT_TRUE(pending->WriteImage(4, nullptr).IsInvalidArgument());  // no such image
  ASSERT_TRUE(pending->Finish().ok());  // writes image 3 and the manifest
  EXPECT_TRUE(pending->WriteImage(3, nullptr).IsInvalidArgument());
  pending.reset();
  std::unique_ptr<DB> copy = OpenCopy("/ckpt");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(ScanOf(copy.get()), expected[0]);
  const char* names[] = {"a", "b", "c"};
  for (size_t f = 1; f < families.size(); f++) {
    ColumnFamilyHandle* h = copy->GetColumnFamily(names[f - 1]);
    ASSERT_NE(h, nullptr) << names[f - 1];
    EXPECT_EQ(ScanOf(copy.get(), ReadOptions(), h), expected[f]) << names[f - 1];
  }
}

TEST_F(CheckpointImageTest, WhatDiesInMemoryIsNeverWritten) {
  // A window's entries, then its clear: nothing of it lives.
  for (int i = 0; i < 2000; i++) Put(Key(i), std::string(200, 'w'), 7);
  for (int i = 0; i < 2000; i++) ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, Key(i)).ok());
  Put(Key(5000), "live");
  ASSERT_TRUE(db_->Checkpoint("/ckpt").ok());
  const DbStatistics st = db_->GetStatistics();
  EXPECT_EQ(st.bytes_written_flush, 0u);
  EXPECT_EQ(st.live_bytes, 0u);
  // The copy has the live entry and no tombstone: no file under it holds the keys.
  EXPECT_LT(st.bytes_written_checkpoint_image, 8192u);
  EXPECT_EQ(CopyScan("/ckpt"), Key(5000) + "=live ");
}

TEST_F(CheckpointImageTest, ACopyThatWouldBeFlushedLinksTheFlushInstead) {
  options_.write_buffer_size = 1 << 20;  // a quarter: 256 KiB
  Reopen();
  for (int i = 0; i < 1000; i++) Put(Key(i), RandomValue(100));
  for (int round = 0; round < 2; round++) {
    ASSERT_TRUE(db_->Checkpoint("/ckpt" + std::to_string(round)).ok());
    ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
    EXPECT_EQ(db_->GetStatistics().flushes, 0u) << "round " << round;
    EXPECT_EQ(db_->GetStatistics().checkpoint_flushes, 0u) << "round " << round;
  }
  const uint64_t copied = db_->GetStatistics().bytes_written_checkpoint_image;
  ASSERT_GT(copied, 200u << 10);
  ASSERT_LT(copied, 256u << 10);
  // A third copy at the last one's bytes per memtable byte would pass the
  // quarter, and the memtable would go to files right after it: it goes
  // now, and the copy links the flushed file instead of writing one.
  ASSERT_TRUE(db_->Checkpoint("/ckpt2").ok());
  DbStatistics st = db_->GetStatistics();
  EXPECT_EQ(st.bytes_written_checkpoint_image, copied);
  EXPECT_EQ(st.flushes, 1u);
  EXPECT_EQ(st.checkpoint_flushes, 1u);
  EXPECT_EQ(st.column_families[0].memtable_entries, 0u);
  EXPECT_EQ(CopyScan("/ckpt2"), Scan());
  std::vector<std::string> children;
  ASSERT_TRUE(env_->GetChildren("/ckpt2", &children).ok());
  int tables = 0;
  for (const std::string& c : children) {
    if (!c.ends_with(".sst")) continue;
    tables++;
    uint64_t links = 0;
    ASSERT_TRUE(env_->GetLinkCount("/ckpt2/" + c, &links).ok());
    EXPECT_EQ(links, 2u) << c << " is the database's file, linked";
  }
  EXPECT_EQ(tables, 1);
  // The count starts again: the next checkpoints copy the memtable.
  Put(Key(5000), "next");
  ASSERT_TRUE(db_->Checkpoint("/ckpt3").ok());
  st = db_->GetStatistics();
  EXPECT_EQ(st.flushes, 1u);
  EXPECT_EQ(st.checkpoint_flushes, 1u);
  EXPECT_GT(st.bytes_written_checkpoint_image, copied);
  EXPECT_EQ(CopyScan("/ckpt3"), Scan());
}

// The flush a copy links may run after the database has moved on: it writes
// what the copy's files showed when it began, not what later deletes and
// horizons leave.
TEST_F(CheckpointImageTest, TheFlushACopyLinksWritesWhatWasVisibleWhenItBegan) {
  TableFileGate& flush = ReopenWithGatedFlushes();
  for (int i = 0; i < 1000; i++) Put(Key(i), RandomValue(100), /*dk=*/i);
  ASSERT_TRUE(db_->Checkpoint("/ckpt0").ok());
  ASSERT_TRUE(db_->Checkpoint("/ckpt1").ok());
  const uint64_t copied = db_->GetStatistics().bytes_written_checkpoint_image;
  const std::string at_begin = Scan();
  std::unique_ptr<PendingCheckpoint> pending;
  ASSERT_TRUE(db_->BeginCheckpoint("/ckpt2", CheckpointOptions(), &pending).ok());
  ASSERT_TRUE(flush.Await(std::chrono::seconds(30))) << "the copy switched the memtable";
  EXPECT_EQ(db_->GetStatistics().checkpoint_flushes, 1u);
  // The flush is held while it creates its file; the database goes on.
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 300).ok());
  ASSERT_TRUE(db_->DeleteByDeleteKey(cf_, 500, 600).ok());
  Put(Key(700), "after");
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, Key(800)).ok());
  const std::string now = Scan();
  ASSERT_NE(now, at_begin);
  flush.Release();
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  // The flushed file, compacted away before the copy links it, stays for it.
  ASSERT_TRUE(db_->CompactAll().ok());
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  ASSERT_TRUE(pending->Finish().ok());
  pending.reset();
  EXPECT_EQ(db_->GetStatistics().bytes_written_checkpoint_image, copied) << "linked, not copied";
  EXPECT_EQ(CopyScan("/ckpt2"), at_begin);
  EXPECT_EQ(Scan(), now);
}

// The flush a copy waits for may start after the database has moved on: it
// keeps what the copy's files showed when the copy began (the horizon, the
// deletes by delete key), not what the files show when it starts.
TEST_F(CheckpointImageTest, TheFlushACopyLinksJudgesByTheFilesWhenTheCopyBegan) {
  options_.write_buffer_size = 1 << 20;
  Reopen();
  for (int i = 0; i < 1000; i++) Put(Key(i), RandomValue(100), /*dk=*/i);
  ASSERT_TRUE(db_->Checkpoint("/ckpt0").ok());
  ASSERT_TRUE(db_->Checkpoint("/ckpt1").ok());
  const std::string at_begin = Scan();
  std::unique_ptr<PendingCheckpoint> pending;
  {
    KillPointGate woken("flush.woken");
    ASSERT_TRUE(db_->BeginCheckpoint("/ckpt2", CheckpointOptions(), &pending).ok());
    ASSERT_TRUE(woken.Await(std::chrono::seconds(30))) << "the copy switched the memtable";
    EXPECT_EQ(db_->GetStatistics().checkpoint_flushes, 1u);
    // The flush has not looked at the database yet.
    ASSERT_TRUE(db_->AdvanceHorizon(cf_, 300).ok());
    ASSERT_TRUE(db_->DeleteByDeleteKey(cf_, 500, 600).ok());
  }
  const std::string now = Scan();
  ASSERT_NE(now, at_begin);
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  ASSERT_TRUE(pending->Finish().ok());
  pending.reset();
  EXPECT_EQ(CopyScan("/ckpt2"), at_begin);
  EXPECT_EQ(Scan(), now);
}

// How long flushes run, how long they wait for the flush thread, and how long
// after a copy began the flush it links was done are counted (wall time):
// what a checkpoint's asynchronous part waits for.
TEST_F(CheckpointImageTest, FlushesAndTheCopiesWaitForThemAreTimed) {
  TableFileGate& flush = ReopenWithGatedFlushes();
  for (int i = 0; i < 1000; i++) Put(Key(i), RandomValue(100));
  ASSERT_TRUE(db_->Checkpoint("/ckpt0").ok());
  ASSERT_TRUE(db_->Checkpoint("/ckpt1").ok());
  DbStatistics st = db_->GetStatistics();
  ASSERT_EQ(st.flushes, 0u);
  EXPECT_EQ(st.flush_micros, 0u);
  EXPECT_EQ(st.checkpoint_flush_wait_micros, 0u) << "the copies so far linked no flush";
  EXPECT_EQ(st.flush_delay_micros, 0u);
  std::unique_ptr<PendingCheckpoint> pending;
  Status finished;
  std::thread finishing;
  struct Joining {  // should an assertion end the test early: no held flush, no joinable thread
    TableFileGate& gate;
    std::thread& thread;
    ~Joining() {
      gate.Release();
      if (thread.joinable()) thread.join();
    }
  } joining{flush, finishing};
  {
    KillPointGate woken("flush.woken");
    ASSERT_TRUE(db_->BeginCheckpoint("/ckpt2", CheckpointOptions(), &pending).ok());
    ASSERT_TRUE(woken.Await(std::chrono::seconds(30))) << "the copy switched the memtable";
    finishing = std::thread([&] { finished = pending->Finish(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }  // the flush thread was held 200 ms before it started the flush
  ASSERT_TRUE(flush.Await(std::chrono::seconds(30)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  flush.Release();  // and the flush 300 ms creating its file, the copy waiting for both
  finishing.join();
  ASSERT_TRUE(finished.ok()) << finished.ToString();
  pending.reset();
  st = db_->GetStatistics();
  EXPECT_EQ(st.flushes, 1u);
  EXPECT_GE(st.flush_delay_micros, 200'000u);
  EXPECT_LT(st.flush_delay_micros, 30'000'000u);
  EXPECT_GE(st.flush_micros, 300'000u);
  EXPECT_LT(st.flush_micros, 30'000'000u);
  EXPECT_GE(st.checkpoint_flush_wait_micros, 500'000u);
  EXPECT_LT(st.checkpoint_flush_wait_micros, 60'000'000u);
  EXPECT_LE(st.checkpoint_flush_wait_micros, st.flush_delay_micros + st.flush_micros + 1000) << "one flush's time";
  EXPECT_EQ(CopyScan("/ckpt2"), Scan());
}

TEST_F(CheckpointImageTest, FlushFirstLeavesNoMemtableToCopy) {
  WriteMixedState();
  const std::string expected = Scan();
  const DbStatistics before = db_->GetStatistics();
  CheckpointOptions options;
  options.flush_first = true;
  std::unique_ptr<PendingCheckpoint> pending;
  ASSERT_TRUE(db_->BeginCheckpoint("/ckpt", options, &pending).ok());
  ASSERT_TRUE(pending->Finish().ok());
  const DbStatistics after = db_->GetStatistics();
  EXPECT_EQ(after.flushes, before.flushes + 1);
  EXPECT_EQ(after.bytes_written_checkpoint_image, before.bytes_written_checkpoint_image);
  EXPECT_EQ(after.column_families[0].memtable_entries, 0u);
  EXPECT_EQ(CopyScan("/ckpt"), expected);
}

TEST_F(CheckpointImageTest, AnUnfinishedCopyIsRemoved) {
  Put(Key(1), "v");
  std::unique_ptr<PendingCheckpoint> pending;
  ASSERT_TRUE(db_->BeginCheckpoint("/ckpt", CheckpointOptions(), &pending).ok());
  EXPECT_TRUE(env_->FileExists("/ckpt"));
  EXPECT_TRUE(db_->BeginCheckpoint("/ckpt", CheckpointOptions(), &pending).IsInvalidArgument());  // exists
  pending.reset();
  EXPECT_FALSE(env_->FileExists("/ckpt"));
  EXPECT_TRUE(db_->BeginCheckpoint("", CheckpointOptions(), &pending).IsInvalidArgument());
}

// A staging copy (sync off) is complete when Finish returns, but not
// durable: a crash may take what Finish wrote. A synced copy survives one.
TEST_F(CheckpointImageTest, OnlyASyncedCopySurvivesACrash) {
  WriteMixedState();
  const std::string expected = Scan();
  CheckpointOptions staging;
  staging.sync = false;
  for (const auto& [dir, options] : {std::pair{"/staged", staging}, std::pair{"/synced", CheckpointOptions()}}) {
    std::unique_ptr<PendingCheckpoint> pending;
    ASSERT_TRUE(db_->BeginCheckpoint(dir, options, &pending).ok());
    ASSERT_TRUE(pending->Finish().ok());
    EXPECT_EQ(CopyScan(dir), expected) << dir;
  }
  db_.reset();
  env_->SimulateCrash();
  EXPECT_FALSE(ReadsWhole("/staged", expected));
  EXPECT_TRUE(ReadsWhole("/synced", expected));
}

// In a time-ordered family, level 0's order is the read order: the copy of
// the memtables must come before every file, which holds older versions.
TEST_F(CheckpointImageTest, TheMemtablesComeFirstInATimeOrderedFamily) {
  options_.cf_defaults.compaction_style = CompactionStyle::kTimeOrdered;
  Reopen();
  for (int i = 0; i < 100; i++) Put(Key(i), "old", 1);
  ASSERT_TRUE(db_->Flush().ok());
  for (int i = 0; i < 100; i += 2) Put(Key(i), "new", 2);
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, Key(1), 2).ok());
  const std::string expected = Scan();
  ASSERT_TRUE(db_->Checkpoint("/ckpt").ok());
  std::unique_ptr<DB> copy = OpenCopy("/ckpt");
  EXPECT_EQ(ScanOf(copy.get()), expected);
  std::string files;
  ASSERT_TRUE(copy->GetProperty(copy->DefaultColumnFamily(), "lethe.num-files-at-level0", &files));
  EXPECT_EQ(files, "2");
  std::string v;
  EXPECT_TRUE(copy->Get(ReadOptions(), copy->DefaultColumnFamily(), Key(1), &v).IsNotFound());
  ASSERT_TRUE(copy->Get(ReadOptions(), copy->DefaultColumnFamily(), Key(2), &v).ok());
  EXPECT_EQ(v, "new");
}

}  // namespace
}  // namespace lethe
