// Compaction in memory (Options::compact_in_memory): a flush whose survivors
// are few and hold no tombstone keeps them in memory instead of writing a
// file; Flush writes them out; a WAL, tombstones and large remainders send
// flushes to files as before.
#include <gtest/gtest.h>

#include <string>

#include "lethe/db.h"
#include "test_util.h"

namespace lethe {
namespace {

constexpr int kWindowKeys = 500;

class InMemoryCompactionTest : public MemDbTest {
 protected:
  void SetUp() override {
    options_.use_wal = false;
    options_.write_buffer_size = 1 << 20;
    Reopen();
  }

  std::string Key(int window, int i) { return "w" + std::to_string(1000 + window) + "/" + std::to_string(1000 + i); }

  // Windows as a window operator writes them: each window's entries carry
  // its number as delete key, and the horizon passes a window once the next
  // one is written. About 85 KiB of memtable per window: the survivors of a
  // flush (the window before and the one being written) fit in a quarter of
  // the write buffer.
  void WriteWindows(int from, int to) {
    for (int w = from; w < to; w++) {
      for (int i = 0; i < kWindowKeys; i++) Put(Key(w, i), std::string(100, static_cast<char>('a' + w % 26)), w);
      ASSERT_TRUE(db_->AdvanceHorizon(cf_, w).ok());
    }
    ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  }

  // Whether exactly window `w` is live, read by gets and by a scan.
  void ExpectOnlyWindow(int w) {
    EXPECT_EQ(Get(Key(w, 0)), std::string(100, static_cast<char>('a' + w % 26)));
    EXPECT_EQ(Get(Key(w, kWindowKeys - 1)), std::string(100, static_cast<char>('a' + w % 26)));
    EXPECT_EQ(Get(Key(w - 1, 0)), "NOT_FOUND");
    int n = 0;
    auto it = db_->NewIterator(ReadOptions(), cf_);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      EXPECT_EQ(it->key().substr(0, 5), Key(w, 0).substr(0, 5));
      n++;
    }
    ASSERT_TRUE(it->status().ok());
    EXPECT_EQ(n, kWindowKeys);
  }
};

TEST_F(InMemoryCompactionTest, ExpiredWindowsNeverReachAFileAndTheLiveOneOnlyOnFlush) {
  WriteWindows(0, 80);  // about 6.5 MiB through a 1 MiB write buffer
  DbStatistics st = db_->GetStatistics();
  EXPECT_GE(st.in_memory_compactions, 5u);
  EXPECT_EQ(st.bytes_written_flush, 0u);
  EXPECT_EQ(st.live_bytes, 0u);
  ExpectOnlyWindow(79);

  // Flush writes what is resident: it is then on disk and survives a reopen.
  ASSERT_TRUE(db_->Flush().ok());
  st = db_->GetStatistics();
  EXPECT_GT(st.bytes_written_flush, 0u);
  EXPECT_EQ(st.column_families[0].memtable_entries, 0u);
  ExpectOnlyWindow(79);
  Reopen();
  ExpectOnlyWindow(79);
}

TEST_F(InMemoryCompactionTest, AResidentMemtableIsMergedIntoTheNextFlushesAndSeenByIterators) {
  WriteWindows(0, 20);
  ASSERT_GT(db_->GetStatistics().in_memory_compactions, 0u);
  // An iterator opened now keeps reading what it saw while later flushes
  // replace the resident memtable it reads.
  auto it = db_->NewIterator(ReadOptions(), cf_);
  WriteWindows(20, 40);
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    EXPECT_EQ(it->key().substr(0, 5), Key(19, 0).substr(0, 5));
    n++;
  }
  EXPECT_EQ(n, kWindowKeys);
  EXPECT_GT(db_->GetStatistics().in_memory_compactions, 1u);
  ExpectOnlyWindow(39);
}

// State updated in place: 8,000 keys, each written 30 times. A memtable
// holds about nine versions of each key, so the survivors' share of the
// room is judged by the keys read, not the entries (a try that reads only
// each key's newest version would otherwise see survivors far past their
// share and give up).
TEST_F(InMemoryCompactionTest, KeysUpdatedManyTimesStayInMemory) {
  options_.write_buffer_size = 4 << 20;  // room: 1 MiB; survivors about 0.6 MiB
  Reopen();
  constexpr int kKeys = 8000;
  for (int round = 0; round < 30; round++) {
    for (int i = 0; i < kKeys; i++) Put("k" + std::to_string(100000 + (i * 7919) % kKeys), std::to_string(round));
  }
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  DbStatistics st = db_->GetStatistics();
  EXPECT_GE(st.in_memory_compactions, 3u);
  EXPECT_EQ(st.bytes_written_flush, 0u);
  for (int i = 0; i < kKeys; i += 997) EXPECT_EQ(Get("k" + std::to_string(100000 + i)), "29");
}

TEST_F(InMemoryCompactionTest, SurvivingTombstonesGoToFiles) {
  for (int i = 0; i < 100; i++) Put("f" + std::to_string(1000 + i), "v");
  ASSERT_TRUE(db_->Flush().ok());
  const uint64_t flushed = db_->GetStatistics().bytes_written_flush;
  // The delete must reach the file holding f1000; the overwrites of a few
  // hot keys fill the memtable and would fit in memory on their own (and
  // do, in the flushes after the first).
  ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, "f1000").ok());
  for (int i = 0; i < 10000; i++) Put("h" + std::to_string(i % 50), std::string(100, 'h'));
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  const DbStatistics st = db_->GetStatistics();
  EXPECT_GT(st.bytes_written_flush, flushed);
  EXPECT_EQ(Get("f1000"), "NOT_FOUND");
  EXPECT_EQ(Get("f1001"), "v");
  uint64_t file_tombstones = 0;
  for (const auto& l : st.column_families[0].levels) file_tombstones += l.point_tombstones;
  EXPECT_EQ(file_tombstones, 1u);
}

TEST_F(InMemoryCompactionTest, SurvivorsBeyondAQuarterOfTheWriteBufferGoToFiles) {
  // Distinct keys that never expire: everything survives.
  for (int i = 0; i < 20000; i++) Put("k" + std::to_string(100000 + i), std::string(100, 'k'));
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  const DbStatistics st = db_->GetStatistics();
  EXPECT_EQ(st.in_memory_compactions, 0u);
  EXPECT_GT(st.bytes_written_flush, 0u);
  EXPECT_LE(st.column_families[0].memtable_bytes, options_.write_buffer_size + (64 << 10));
  EXPECT_EQ(Get("k100000"), std::string(100, 'k'));
}

TEST_F(InMemoryCompactionTest, WithAWalOrTurnedOffFlushesWriteFiles) {
  for (bool wal : {true, false}) {
    options_.use_wal = wal;
    options_.compact_in_memory = false;
    if (wal) options_.compact_in_memory = true;  // ignored with a WAL
    db_.reset();
    env_ = NewMemEnv();
    options_.env = env_.get();
    Reopen();
    // State that never expires, a few KiB: with compaction in memory on it
    // would stay resident. (The windows alone might all be expired by the
    // time a slow flush runs, and leave nothing to write.)
    for (int i = 0; i < 50; i++) Put("p" + std::to_string(1000 + i), "permanent");
    WriteWindows(0, 20);
    const DbStatistics st = db_->GetStatistics();
    EXPECT_EQ(st.in_memory_compactions, 0u) << "wal " << wal;
    EXPECT_GT(st.bytes_written_flush, 0u) << "wal " << wal;
    EXPECT_EQ(Get("p1000"), "permanent");
    EXPECT_EQ(Get(Key(19, 0)), std::string(100, static_cast<char>('a' + 19)));
    EXPECT_EQ(Get(Key(18, 0)), "NOT_FOUND");
  }
}

}  // namespace
}  // namespace lethe
