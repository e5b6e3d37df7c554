// Window contents under time-ordered compaction: each window's entries carry
// its end as delete key, and the horizon passes whole windows. The files
// must leave by page drops without being merged into older data, where
// leveled compaction rewrites them level after level; reads stay exact.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "test_util.h"

namespace lethe {
namespace {

constexpr int kKeys = 300;
constexpr int kWindows = 40;
constexpr int kKept = 4;  // windows the horizon leaves

// Keys by key, then window, as window state sorts them.
std::string Key(int i, int window) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%04d@%03d", i, window);
  return buf;
}

std::string Value(int i, int window) {
  return std::to_string(i) + "/" + std::to_string(window) + std::string(150, static_cast<char>('a' + i % 26));
}

class TimeOrderedWindowsTest : public MemDbTest, public ::testing::WithParamInterface<CompactionStyle> {
 protected:
  void SetUp() override {
    options_.write_buffer_size = 1 << 20;
    options_.cf_defaults.compaction_style = GetParam();
    options_.cf_defaults.page_size = 1024;
    options_.cf_defaults.compression = Compression::kNone;  // a half window's flush: about 27 KiB
    options_.cf_defaults.level1_bytes = 8 << 10;
    options_.cf_defaults.target_file_size = 16 << 10;
    options_.cf_defaults.size_ratio = 4;
  }
  // Window w's entries, in two flushes (as a checkpoint cuts one), then the
  // horizon past the window kKept before it.
  void Window(int w) {
    for (int i = 0; i < kKeys; i++) {
      Put(Key(i, w), Value(i, w), static_cast<uint64_t>(w));
      if (i == kKeys / 2) {
        ASSERT_TRUE(db_->Flush().ok());
      }
    }
    ASSERT_TRUE(db_->Flush().ok());
    if (w >= kKept) {
      ASSERT_TRUE(db_->AdvanceHorizon(cf_, static_cast<uint64_t>(w - kKept + 1)).ok());
    }
    ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  }
};

TEST_P(TimeOrderedWindowsTest, WindowsLeaveWithoutMerges) {
  Reopen();
  for (int w = 0; w < kWindows; w++) Window(w);
  for (int i = 0; i < kKeys; i += 7) {
    EXPECT_EQ(Get(Key(i, kWindows - 1)), Value(i, kWindows - 1));
    EXPECT_EQ(Get(Key(i, kWindows - kKept)), Value(i, kWindows - kKept));
    EXPECT_EQ(Get(Key(i, kWindows - kKept - 1)), "NOT_FOUND");
  }
  std::string style;
  ASSERT_TRUE(db_->GetProperty(cf_, "lethe.compaction-style", &style));
  EXPECT_EQ(style, GetParam() == CompactionStyle::kTimeOrdered ? "time-ordered" : "leveled");
  const DbStatistics st = db_->GetStatistics();
  ASSERT_EQ(st.column_families.size(), 1u);
  const auto& levels = st.column_families[0].levels;
  uint64_t files = 0, below = 0;
  for (const LevelStatistics& l : levels) (l.level == 0 ? files : below) += l.files;
  if (GetParam() == CompactionStyle::kTimeOrdered) {
    // The half-window flushes (above level1_bytes) are never merged: what
    // leaves goes by the horizon alone.
    EXPECT_EQ(st.bytes_written_compaction, 0u);
    EXPECT_EQ(below, 0u);
    EXPECT_LE(files, 2u * kKept + 2);  // the kept windows, and what the last drop left
  } else {
    // The same windows merged down the levels: more bytes than the flushes.
    EXPECT_GT(st.bytes_written_compaction, st.bytes_written_flush);
    EXPECT_GT(below, 0u);
  }
}

TEST_P(TimeOrderedWindowsTest, SmallFlushesMergeIntoOneFile) {
  options_.cf_defaults.level1_bytes = 1 << 20;  // every flush is young
  options_.cf_defaults.level0_compaction_trigger = 4;
  Reopen();  // a new database: a column family keeps the options it was created with
  for (int w = 0; w < 4; w++) Window(w);  // eight flushes of half a window
  const DbStatistics st = db_->GetStatistics();
  if (GetParam() == CompactionStyle::kTimeOrdered) {
    EXPECT_GT(st.compactions_level0, 0u);
    EXPECT_EQ(st.column_families[0].levels.size(), 1u) << "every file in level 0";
    EXPECT_LT(st.column_families[0].levels[0].files, 4u);
  }
  for (int i = 0; i < kKeys; i += 5) {
    EXPECT_EQ(Get(Key(i, 3)), Value(i, 3));
  }
}

// 100 characters of 16 symbols: an entropy coder's gain (ZSTD: about 50
// bytes), not a match finder's (LZ4: about 100).
std::string Symbols(uint64_t* x) {
  std::string v;
  for (int j = 0; j < 100; j++) {
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    v.push_back(static_cast<char>('a' + (*x >> 60)));
  }
  return v;
}

// Time-ordered files stay as written: flushes take the bottommost codec,
// except one a caller waits for (a checkpoint's), which stays fast.
TEST_P(TimeOrderedWindowsTest, FlushesTakeTheBottommostCodecWhenTimeOrdered) {
  options_.write_buffer_size = 64 << 10;  // full memtables flush on their own
  options_.cf_defaults.compression = Compression::kLZ4;
  options_.cf_defaults.bottommost_compression = Compression::kZSTD;
  options_.cf_defaults.level0_compaction_trigger = 100;
  Reopen();
  uint64_t x = 1;
  for (int i = 0; i < 2000; i++) Put(Key(i, 0), Symbols(&x), 0);
  ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  const DbStatistics background = db_->GetStatistics();
  ASSERT_GT(background.flushes, 0u);
  const uint64_t flushed = 2000 - background.column_families[0].memtable_entries;
  ASSERT_GT(flushed, 1000u);
  const double per_value = static_cast<double>(background.bytes_written_flush) / static_cast<double>(flushed);
  for (int i = 0; i < 300; i++) Put(Key(i, 1), Symbols(&x), 1);
  ASSERT_TRUE(db_->Flush().ok());
  const DbStatistics requested = db_->GetStatistics();
  const double requested_per_value =
      static_cast<double>(requested.bytes_written_flush - background.bytes_written_flush) / 300;
  EXPECT_GT(requested_per_value, 75) << "a requested flush keeps LZ4";
  if (GetParam() == CompactionStyle::kTimeOrdered) {
    EXPECT_LT(per_value, 75) << "full memtables flushed with ZSTD";
  } else {
    EXPECT_GT(per_value, 75) << "leveled flushes write LZ4";
  }
}

// A flush no caller waits for is not a requested one: when checkpoints'
// copies pass their share, the memtables go to files in the background, in
// the codec of files that stay.
TEST_P(TimeOrderedWindowsTest, ABackgroundFlushAfterCheckpointCopiesTakesTheBottommostCodec) {
  options_.use_wal = false;  // checkpoints copy the memtables
  options_.cf_defaults.compression = Compression::kLZ4;
  options_.cf_defaults.bottommost_compression = Compression::kZSTD;
  options_.cf_defaults.level0_compaction_trigger = 100;
  Reopen();  // 1 MiB of write buffer: a quarter is 256 KiB of copies
  uint64_t x = 1;
  for (int i = 0; i < 3000; i++) Put(Key(i, 0), Symbols(&x), 0);
  int checkpoints = 0;
  while (db_->GetStatistics().flushes == 0 && checkpoints < 40) {
    ASSERT_TRUE(db_->Checkpoint("/ckpt" + std::to_string(checkpoints++)).ok());
    ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  }
  const DbStatistics st = db_->GetStatistics();
  ASSERT_EQ(st.flushes, 1u) << "the copies' share asked for one flush";
  ASSERT_GT(checkpoints, 1) << "not before the copies reached their share";
  ASSERT_EQ(st.column_families[0].memtable_entries, 0u);
  const double per_value = static_cast<double>(st.bytes_written_flush) / 3000;
  if (GetParam() == CompactionStyle::kTimeOrdered) {
    EXPECT_LT(per_value, 75) << "flushed with ZSTD";
  } else {
    EXPECT_GT(per_value, 75) << "leveled flushes write LZ4";
  }
}

// Time moves only when the test says so: how long writes and flushes take
// (much longer under the sanitizers) cannot make a budget expire early.
class TimeOrderedClearsTest : public MemDbTest {
 protected:
  TimeOrderedClearsTest() { options_.clock = &clock_; }
  void TearDown() override { db_.reset(); }  // the database reads the clock until closed

  ManualClock clock_{1'000'000};
};

// A window's clears carry its end as delete key and are written just before
// the horizon passes it. Under FADE they leave with their pages (dropped
// whole, or patched where a page holds later windows too), within D_th,
// and no file is merged with the older ones for them.
TEST_F(TimeOrderedClearsTest, LeaveByPageDropsWithoutMerges) {
  options_.write_buffer_size = 1 << 20;
  options_.cf_defaults.compaction_style = CompactionStyle::kTimeOrdered;
  options_.cf_defaults.compression = Compression::kNone;
  options_.cf_defaults.page_size = 1024;
  options_.cf_defaults.level1_bytes = 8 << 10;
  options_.cf_defaults.delete_persistence_threshold_us = 20'000;  // D_th 20 ms
  Reopen();
  for (int w = 0; w < 12; w++) {
    for (int i = 0; i < kKeys; i++) Put(Key(i, w), Value(i, w), static_cast<uint64_t>(w));
    if (w >= 3) {
      for (int i = 0; i < kKeys; i++) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), cf_, Key(i, w - 3), static_cast<uint64_t>(w - 3)).ok());
      }
    }
    ASSERT_TRUE(db_->Flush().ok());
    if (w >= 3) {
      ASSERT_TRUE(db_->AdvanceHorizon(cf_, static_cast<uint64_t>(w - 2)).ok());
    }
    ASSERT_TRUE(db_->WaitForBackgroundWork().ok());  // the page drops, within the budget
    clock_.Advance(30'000);                          // past D_th
    ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
  }
  for (int i = 0; i < kKeys; i += 11) {
    EXPECT_EQ(Get(Key(i, 11)), Value(i, 11));
    EXPECT_EQ(Get(Key(i, 8)), "NOT_FOUND");
  }
  const DbStatistics st = db_->GetStatistics();
  // Merging each file of clears with every older one would read the older
  // windows again at every step: several times what the flushes wrote.
  EXPECT_LT(st.bytes_read_compaction, st.bytes_written_flush);
  EXPECT_GT(st.pages_dropped, 0u);
  EXPECT_GT(st.pages_rewritten, 0u);
  EXPECT_EQ(st.column_families[0].levels.size(), 1u);
  EXPECT_EQ(st.column_families[0].levels[0].point_tombstones, 0u) << "every clear gone within D_th";
}

INSTANTIATE_TEST_SUITE_P(Styles, TimeOrderedWindowsTest,
                         ::testing::Values(CompactionStyle::kTimeOrdered, CompactionStyle::kLeveled),
                         [](const ::testing::TestParamInfo<CompactionStyle>& info) {
                           return info.param == CompactionStyle::kTimeOrdered ? "TimeOrdered" : "Leveled";
                         });

}  // namespace
}  // namespace lethe
