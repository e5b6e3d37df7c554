// FADE's promise, tested in logical time: with a delete persistence threshold
// D_th, no tombstone (and so nothing it deletes) is older than D_th in any
// file or memtable at any checkpoint of a run: uniform updates with deletes,
// adversarial workloads (hot keys over a settled tree, so levels
// stop filling; deletes of just-inserted keys), a burst then silence, and a
// reopen from a checkpoint in the middle; with static and with dynamic level
// targets. The same runs with FADE off must show
// tombstones older than D_th, or the test could not fail.
//
// A checkpoint: the clock has moved, then WaitForBackgroundWork lets the
// background threads finish what is due at that time. Checkpoints come every
// 10 ms of logical time, well inside FADE's slack (10 % of D_th = 100 ms).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "lethe/db.h"
#include "lethe/env.h"
#include "lethe/statistics.h"
#include "util/random.h"

namespace lethe {
namespace {

constexpr uint64_t kThresholdUs = 1'000'000;  // D_th = 1 s of logical time
constexpr uint64_t kStepUs = 100;             // one operation
constexpr int kCheckEvery = 100;              // operations between checkpoints (10 ms)

std::string Key(uint64_t i) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "key%012llu", static_cast<unsigned long long>(i));
  return buf;
}

class FadeRun {
 public:
  explicit FadeRun(bool fade, bool dynamic_levels = false) : env_(NewMemEnv()), clock_(1'000'000) {
    options_.env = env_.get();
    options_.clock = &clock_;
    options_.use_wal = false;  // as Flink runs it; durability through checkpoints
    options_.write_buffer_size = 64 << 10;
    options_.page_cache_bytes = 1 << 20;
    options_.cf_defaults.page_size = 1024;
    options_.cf_defaults.size_ratio = 4;
    options_.cf_defaults.level1_bytes = 128 << 10;
    options_.cf_defaults.dynamic_level_bytes = dynamic_levels;
    options_.cf_defaults.target_file_size = 32 << 10;
    // The workloads are sized in bytes against these capacities: uncompressed.
    options_.cf_defaults.compression = Compression::kNone;
    options_.cf_defaults.delete_persistence_threshold_us = fade ? kThresholdUs : 0;
    Open("/db");
  }

  void Open(const std::string& name) {
    db_.reset();
    Status s = DB::Open(options_, name, &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // One operation, then a checkpoint every kCheckEvery operations.
  void Op(const std::function<void(DB*, ColumnFamilyHandle*)>& op) {
    op(db_.get(), db_->DefaultColumnFamily());
    Tick();
  }
  void Tick() {
    clock_.Advance(kStepUs);
    if (++ops_ % kCheckEvery == 0) Check();
  }
  void Check() {
    ASSERT_TRUE(db_->WaitForBackgroundWork().ok());
    DbStatistics st = db_->GetStatistics();
    for (const auto& cf : st.column_families) {
      max_age_us_ = std::max(max_age_us_, cf.oldest_tombstone_age_us);
      uint64_t in_files = 0;
      for (const auto& l : cf.levels) in_files += l.point_tombstones + l.range_tombstones;
      tombstones_seen_ += in_files;
      // "lethe.files" gives the same tombstones file by file (benchmarks
      // draw their age distribution from it), none older than the oldest.
      std::string files;
      ASSERT_TRUE(db_->GetProperty(db_->DefaultColumnFamily(), "lethe.files", &files));
      uint64_t listed = 0;
      for (size_t at = files.find(" tombstones="); at != std::string::npos; at = files.find(" tombstones=", at + 1)) {
        listed += std::stoull(files.substr(at + 12));
        size_t age_at = files.find(" tombstone-age-us=", at);
        ASSERT_NE(age_at, std::string::npos) << files;
        EXPECT_LE(std::stoull(files.substr(age_at + 18)), cf.oldest_tombstone_age_us) << files;
      }
      EXPECT_EQ(listed, in_files) << files;
    }
    delete_driven_ = st.compactions_delete_driven;
  }

  // Reopens a checkpoint of the database, as a restored Flink task would.
  void ReopenFromCheckpoint() {
    std::string dir = "/chk" + std::to_string(ops_);
    ASSERT_TRUE(db_->Checkpoint(dir).ok());
    Open(dir);
  }

  DB* db() { return db_.get(); }
  uint64_t max_age_us() const { return max_age_us_; }
  uint64_t tombstones_seen() const { return tombstones_seen_; }
  uint64_t delete_driven() const { return delete_driven_; }

 private:
  std::unique_ptr<MemEnv> env_;
  ManualClock clock_;
  Options options_;
  std::unique_ptr<DB> db_;
  uint64_t ops_ = 0;
  uint64_t max_age_us_ = 0;
  uint64_t tombstones_seen_ = 0;
  uint64_t delete_driven_ = 0;
};

const WriteOptions kWrite;
const std::string kValue(100, 'v');

// Uniform updates over 4,000 keys with `delete_percent` % point deletes and a
// few range deletes.
void Uniform(FadeRun* run, int delete_percent, int ops, uint64_t seed) {
  Random rnd(seed);
  for (int i = 0; i < ops && !::testing::Test::HasFatalFailure(); i++) {
    uint64_t k = rnd.Uniform(4000);
    uint64_t r = rnd.Uniform(1000);
    run->Op([&](DB* db, ColumnFamilyHandle* cf) {
      if (r < static_cast<uint64_t>(delete_percent) * 10) {
        ASSERT_TRUE(db->Delete(kWrite, cf, Key(k)).ok());
      } else if (r == 999) {
        ASSERT_TRUE(db->DeleteRange(kWrite, cf, Key(k), Key(k + 20)).ok());
      } else {
        ASSERT_TRUE(db->Put(kWrite, cf, Key(k), kValue).ok());
      }
    });
  }
}

// A settled tree of 20,000 keys, then updates and deletes of 100 hot keys
// only: the upper levels never fill again, so classic compaction leaves the
// tombstones where they are while the deleted values sit in deeper levels.
void HotKeys(FadeRun* run, int ops) {
  for (uint64_t k = 0; k < 20000 && !::testing::Test::HasFatalFailure(); k++) {
    run->Op([&](DB* db, ColumnFamilyHandle* cf) { ASSERT_TRUE(db->Put(kWrite, cf, Key(k * 7 % 20000), kValue).ok()); });
  }
  Random rnd(7);
  for (int i = 0; i < ops && !::testing::Test::HasFatalFailure(); i++) {
    uint64_t k = 5000 + rnd.Uniform(100);
    bool del = rnd.Uniform(100) < 10;
    run->Op([&](DB* db, ColumnFamilyHandle* cf) {
      ASSERT_TRUE((del ? db->Delete(kWrite, cf, Key(k)) : db->Put(kWrite, cf, Key(k), kValue)).ok());
    });
  }
}

// Inserts keys spread over a large space and deletes some of them shortly
// after: the tombstones land in upper levels, over deeper files that hold
// other keys of their range.
void DeleteRecentInserts(FadeRun* run, int ops) {
  Random rnd(11);
  std::vector<uint64_t> recent(50);
  for (int i = 0; i < ops && !::testing::Test::HasFatalFailure(); i++) {
    uint64_t k = rnd.Uniform(1'000'000'000);
    run->Op([&](DB* db, ColumnFamilyHandle* cf) {
      ASSERT_TRUE(db->Put(kWrite, cf, Key(k), kValue).ok());
      if (i >= 50 && i % 10 == 0) {
        ASSERT_TRUE(db->Delete(kWrite, cf, Key(recent[i % 50])).ok());
      }
    });
    recent[i % 50] = k;
  }
}

// Time passes with no operation at all.
void Silence(FadeRun* run, uint64_t duration_us) {
  for (uint64_t t = 0; t < duration_us && !::testing::Test::HasFatalFailure(); t += kStepUs) run->Tick();
}

struct Workload {
  const char* name;
  std::function<void(FadeRun*)> run;
  // Whether FADE must have run delete-driven compactions: under uniform
  // updates its memtable flushes and file choice may suffice.
  bool needs_delete_driven;
};

const Workload kWorkloads[] = {
    {"uniform_2pct_deletes", [](FadeRun* r) { Uniform(r, 2, 40000, 1); }, false},
    {"uniform_10pct_deletes", [](FadeRun* r) { Uniform(r, 10, 40000, 2); }, false},
    {"hot_keys_settled_tree", [](FadeRun* r) { HotKeys(r, 40000); }, true},
    {"delete_recent_inserts", [](FadeRun* r) { DeleteRecentInserts(r, 40000); }, true},
    {"burst_then_silence",
     [](FadeRun* r) {
       Uniform(r, 5, 12000, 3);
       Silence(r, 3 * kThresholdUs);
     },
     true},
    {"reopen_in_the_middle",
     [](FadeRun* r) {
       Uniform(r, 5, 20000, 4);
       r->ReopenFromCheckpoint();
       Uniform(r, 5, 5000, 5);
       Silence(r, 2 * kThresholdUs);
     },
     true},
};

// A workload (its index in kWorkloads) and whether level targets are dynamic.
class FadeBoundTest : public ::testing::TestWithParam<std::tuple<int, bool>> {
 protected:
  const Workload& workload() const { return kWorkloads[std::get<0>(GetParam())]; }
  bool dynamic_levels() const { return std::get<1>(GetParam()); }
};

TEST_P(FadeBoundTest, NoTombstoneOutlivesTheThreshold) {
  const Workload& w = workload();
  FadeRun run(true, dynamic_levels());
  w.run(&run);
  if (HasFatalFailure()) return;
  run.Check();
  EXPECT_GT(run.tombstones_seen(), 0u) << "the workload left no tombstone in any file";
  EXPECT_LE(run.max_age_us(), kThresholdUs) << w.name;
  if (w.needs_delete_driven) {
    EXPECT_GT(run.delete_driven(), 0u) << w.name << ": FADE never had to act";
  }
  std::printf("[ fade     ] %s%s: oldest tombstone seen %.3f s (D_th 1 s), %llu delete-driven compactions\n", w.name,
              dynamic_levels() ? " (dynamic levels)" : "", run.max_age_us() / 1e6,
              static_cast<unsigned long long>(run.delete_driven()));
}

TEST_P(FadeBoundTest, WithoutFadeTombstonesOutliveTheThreshold) {
  const Workload& w = workload();
  FadeRun run(false, dynamic_levels());
  w.run(&run);
  if (HasFatalFailure()) return;
  run.Check();
  EXPECT_GT(run.max_age_us(), kThresholdUs) << w.name << ": the workload cannot tell FADE from no FADE";
  std::printf("[ no fade  ] %s%s: oldest tombstone seen %.3f s (D_th 1 s)\n", w.name,
              dynamic_levels() ? " (dynamic levels)" : "", run.max_age_us() / 1e6);
}

INSTANTIATE_TEST_SUITE_P(Workloads, FadeBoundTest,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kWorkloads))),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<int, bool>>& info) {
                           return std::string(kWorkloads[std::get<0>(info.param)].name) +
                                  (std::get<1>(info.param) ? "_dynamic_levels" : "");
                         });

}  // namespace
}  // namespace lethe
