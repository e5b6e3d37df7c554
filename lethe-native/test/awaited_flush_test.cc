// A flush that someone waits for (a Flush call, or a checkpoint copy that
// links the files of the flush it switched to) goes first: a compaction
// running meanwhile pauses between keys until the flush is installed, so that
// on two cores it does not take the core the flush would run on. The pause is
// counted (compaction_give_way_micros), and the compaction's result is the
// same.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "lethe/db.h"
#include "test_util.h"

namespace lethe {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class AwaitedFlushTest : public MemDbTest {
 protected:
  // Two overlapping level-0 files, compactions only when asked, and table
  // files created through an Env a test can hold.
  void SetUp() override {
    gated_env_ = std::make_unique<FaultInjectionEnv>(env_.get());
    options_.env = gated_env_.get();
    options_.use_wal = false;
    options_.write_buffer_size = 1 << 20;
    options_.background_compactions = false;
    Reopen();
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < 2000; i++) Put(Key(i), "v" + std::to_string(round) + "-" + std::to_string(i));
      ASSERT_TRUE(db_->Flush().ok());
    }
  }

  void TearDown() override {
    if (compaction_gate_ != nullptr) compaction_gate_->Release();
    if (compacting_.joinable()) compacting_.join();
    db_.reset();
  }

  static std::string Key(int i) { return "k" + std::to_string(100000 + i); }

  std::string RandomValue(size_t n) { return IncompressibleValue(rnd_, n); }

  // Starts CompactAll on a thread of its own and holds it where the
  // compaction creates its output (past its first key).
  void StartHeldCompaction() {
    compaction_gate_ = std::make_unique<TableFileGate>(gated_env_.get(), TableFileGate::Op::kCreate, "/db/");
    compacting_ = std::thread([this] { compacted_ = db_->CompactAll(); });
    ASSERT_TRUE(compaction_gate_->Await(seconds(30))) << "the compaction creates its output";
  }

  uint64_t CompactionsInstalled() { return db_->GetStatistics().compactions_manual; }

  std::mt19937_64 rnd_{7};
  std::unique_ptr<FaultInjectionEnv> gated_env_;
  std::unique_ptr<TableFileGate> compaction_gate_;
  std::thread compacting_;
  Status compacted_;
};

TEST_F(AwaitedFlushTest, ACompactionPausesWhileAFlushCallWaits) {
  StartHeldCompaction();
  for (int i = 0; i < 100; i++) Put(Key(5000 + i), "new");
  const std::string expected = Scan();
  Status flushed;
  std::thread flushing;
  {
    KillPointGate woken("flush.woken");
    flushing = std::thread([&] { flushed = db_->Flush(); });
    ASSERT_TRUE(woken.Await(seconds(30))) << "the flush thread took the switched memtable";
    compaction_gate_->Release();
    std::this_thread::sleep_for(milliseconds(300));
    EXPECT_EQ(CompactionsInstalled(), 0u) << "the compaction waits for the flush someone waits for";
  }  // the flush goes on, then the compaction
  flushing.join();
  compacting_.join();
  ASSERT_TRUE(flushed.ok()) << flushed.ToString();
  ASSERT_TRUE(compacted_.ok()) << compacted_.ToString();
  const DbStatistics st = db_->GetStatistics();
  EXPECT_EQ(st.compactions_manual, 1u);
  EXPECT_GE(st.compaction_give_way_micros, 250'000u);
  EXPECT_LT(st.compaction_give_way_micros, 30'000'000u);
  EXPECT_EQ(Scan(), expected);
}

TEST_F(AwaitedFlushTest, ACompactionPausesWhileACheckpointCopyWaitsForItsFlush) {
  StartHeldCompaction();
  for (int i = 0; i < 1000; i++) Put(Key(5000 + i), RandomValue(100));
  // The copies so far took the memtable as it is; the third would make the
  // copies since the last flush reach a quarter of the write buffer, so it
  // switches the memtables to files and links the flush's file.
  ASSERT_TRUE(db_->Checkpoint("/ckpt0").ok());
  ASSERT_TRUE(db_->Checkpoint("/ckpt1").ok());
  const std::string expected = Scan();
  std::unique_ptr<PendingCheckpoint> pending;
  {
    KillPointGate woken("flush.woken");
    ASSERT_TRUE(db_->BeginCheckpoint("/ckpt2", CheckpointOptions(), &pending).ok());
    ASSERT_TRUE(woken.Await(seconds(30))) << "the copy switched the memtable";
    ASSERT_EQ(db_->GetStatistics().checkpoint_flushes, 1u);
    compaction_gate_->Release();
    std::this_thread::sleep_for(milliseconds(300));
    EXPECT_EQ(CompactionsInstalled(), 0u) << "the compaction waits for the flush the copy links";
  }
  ASSERT_TRUE(pending->Finish().ok());
  pending.reset();
  compacting_.join();
  ASSERT_TRUE(compacted_.ok()) << compacted_.ToString();
  EXPECT_EQ(CompactionsInstalled(), 1u);
  EXPECT_GE(db_->GetStatistics().compaction_give_way_micros, 250'000u);
  EXPECT_EQ(Scan(), expected);
  std::unique_ptr<DB> copy;
  ASSERT_TRUE(DB::Open(options_, "/ckpt2", &copy).ok());
  EXPECT_EQ(ScanOf(copy.get()), expected);
}

// A flush nobody waits for (a full memtable's) does not hold compactions up.
TEST_F(AwaitedFlushTest, ACompactionRunsBesideAFlushNobodyWaitsFor) {
  StartHeldCompaction();
  {
    KillPointGate woken("flush.woken");
    // Until the write buffer is full: the memtable switches by itself.
    for (int i = 0; i < 100'000 && !woken.Await(seconds(0)); i++) Put(Key(10000 + i), RandomValue(100));
    ASSERT_TRUE(woken.Await(seconds(30))) << "a full memtable switched";
    compaction_gate_->Release();
    compacting_.join();
    EXPECT_EQ(CompactionsInstalled(), 1u);
    EXPECT_EQ(db_->GetStatistics().compaction_give_way_micros, 0u);
  }
  ASSERT_TRUE(compacted_.ok()) << compacted_.ToString();
}

}  // namespace
}  // namespace lethe
