// What holds old versions of the file set and the work after it: open
// iterators, checkpoint copies and the running compaction, as the statistics
// report them (held versions, their age, the obsolete file bytes they keep,
// open iterators and checkpoints, the running compaction's age and input).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "env/fault_injection_env.h"
#include "lethe/db.h"
#include "test_util.h"

namespace lethe {
namespace {

class HeldVersionsTest : public SmallFilesDbTest {
 protected:
  void Fill(const std::string& value) {
    for (int i = 0; i < 2000; i++) Put("key" + std::to_string(i), value);
    ASSERT_TRUE(db_->Flush().ok());
    ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  }
};

TEST_F(HeldVersionsTest, AnIteratorHoldsItsVersionAndItsFilesUntilItCloses) {
  Fill(std::string(100, 'a'));
  DbStatistics st = db_->GetStatistics();
  EXPECT_EQ(st.open_iterators, 0u);
  EXPECT_EQ(st.held_versions, 0u) << "nothing holds a version but the database";
  EXPECT_EQ(st.oldest_held_version_age_us, 0u);
  EXPECT_EQ(st.obsolete_file_bytes_held, 0u);

  auto it = db_->NewIterator(ReadOptions(), cf_);
  EXPECT_EQ(db_->GetStatistics().open_iterators, 1u);
  Fill(std::string(100, 'b'));
  ASSERT_TRUE(db_->CompactAll().ok());  // every file the iterator reads is replaced
  st = db_->GetStatistics();
  EXPECT_GE(st.held_versions, 1u);
  EXPECT_GT(st.oldest_held_version_age_us, 0u);
  EXPECT_GT(st.obsolete_file_bytes_held, 0u) << "the iterator's files stay";
  EXPECT_LE(st.obsolete_file_bytes_held, st.bytes_written_flush + st.bytes_written_compaction);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), std::string(100, 'a')) << "the iterator still reads its own version";

  it.reset();
  st = db_->GetStatistics();
  EXPECT_EQ(st.open_iterators, 0u);
  EXPECT_EQ(st.held_versions, 0u);
  EXPECT_EQ(st.oldest_held_version_age_us, 0u);
  EXPECT_EQ(st.obsolete_file_bytes_held, 0u);
  EXPECT_EQ(st.Get(Ticker::kObsoleteFileBytesHeld), 0u);
}

TEST_F(HeldVersionsTest, ACheckpointCopyCountsUntilReleased) {
  Fill(std::string(100, 'a'));
  std::unique_ptr<PendingCheckpoint> copy;
  ASSERT_TRUE(db_->BeginCheckpoint("/copy", CheckpointOptions(), &copy).ok());
  EXPECT_EQ(db_->GetStatistics().open_checkpoints, 1u);
  Fill(std::string(100, 'b'));
  ASSERT_TRUE(db_->CompactAll().ok());
  DbStatistics st = db_->GetStatistics();
  EXPECT_GE(st.held_versions, 1u) << "the copy holds the version it links";
  EXPECT_GT(st.obsolete_file_bytes_held, 0u);
  ASSERT_TRUE(copy->Finish().ok());
  EXPECT_EQ(db_->GetStatistics().open_checkpoints, 1u) << "finished, not yet released";
  copy.reset();
  st = db_->GetStatistics();
  EXPECT_EQ(st.open_checkpoints, 0u);
  EXPECT_EQ(st.held_versions, 0u);
  EXPECT_EQ(st.obsolete_file_bytes_held, 0u);
}

// A compaction shows while it runs (here held inside the removal of its
// inputs), and the statistics read zeros once it ended.
TEST_F(HeldVersionsTest, TheRunningCompactionShowsUntilItEnds) {
  FaultInjectionEnv slow(env_.get());
  TableFileGate gate(&slow, TableFileGate::Op::kRemove);
  db_.reset();
  options_.env = &slow;
  options_.background_compactions = false;
  Reopen();
  EXPECT_EQ(db_->GetStatistics().running_compaction_input_bytes, 0u);
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < 500; i++) Put("k" + std::to_string(i), std::string(100, static_cast<char>('a' + round)));
    ASSERT_TRUE(db_->Flush().ok());
  }
  std::thread compaction([&] { EXPECT_TRUE(db_->CompactAll().ok()); });
  const bool reached = gate.Await(std::chrono::seconds(30));
  const DbStatistics during = db_->GetStatistics();
  gate.Release();
  compaction.join();
  ASSERT_TRUE(reached) << "the compaction removed no input";
  EXPECT_GT(during.running_compaction_input_bytes, 0u);
  EXPECT_EQ(during.running_compaction_input_bytes, during.bytes_written_flush) << "both flushed files are its input";
  EXPECT_GT(during.running_compaction_age_us, 0u);
  const DbStatistics after = db_->GetStatistics();
  EXPECT_EQ(after.running_compaction_input_bytes, 0u);
  EXPECT_EQ(after.running_compaction_age_us, 0u);
  db_.reset();
  options_.env = env_.get();
}

}  // namespace
}  // namespace lethe
