// File-system faults: write, sync, rename and create failures and a full disk,
// injected at every position of a workload (FaultInjectionEnv over a MemEnv).
// Each case asserts that the fault reaches the caller as an error (never as
// Corruption, a crash or silently lost data), and that the database then
// closes, survives a simulated power loss and reopens cleanly with every
// acknowledged write, and takes writes again.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "env/fault_injection_env.h"
#include "lethe/db.h"
#include "lethe/env.h"
#include "model.h"
#include "util/random.h"

namespace lethe {
namespace {

using model::Model;

uint64_t total_faults = 0;
int total_cases = 0;

class FaultInjectionTest : public ::testing::Test {
 protected:
  FaultInjectionTest() {
    Fresh();
    options_.write_buffer_size = 8 << 10;  // many flushes, hence many files and manifest edits
    options_.cf_defaults.page_size = 256;
    options_.cf_defaults.pages_per_tile = 4;
    options_.cf_defaults.level1_bytes = 32 << 10;
    options_.cf_defaults.target_file_size = 8 << 10;
    options_.cf_defaults.size_ratio = 3;
    options_.cf_defaults.level0_compaction_trigger = 2;
  }

  // A new empty file system, database and model.
  void Fresh() {
    db_.reset();
    mem_ = NewMemEnv();
    env_ = std::make_unique<FaultInjectionEnv>(mem_.get());
    options_.env = env_.get();
    model_ = Model();
    model_.families["default"];
  }

  // Runs op `i` of the workload; the model follows only if it succeeds.
  // Returns the op's status; *next receives the model with the op applied.
  Status RunOp(uint64_t i, Model* next) {
    Random rnd(i * 7919 + 13);
    ColumnFamilyHandle* cf = db_->DefaultColumnFamily();
    const std::string key = "k" + std::to_string(rnd.Uniform(300));
    const uint64_t dk = std::hash<std::string>()(key) % 4 == 0 ? kMaxDeleteKey : i;
    WriteOptions sync;
    sync.sync = true;  // every acknowledged write is durable: a lost one is a failure
    uint64_t r = rnd.Uniform(100);
    *next = model_;
    if (r < 60) {
      std::string v(20 + rnd.Uniform(200), static_cast<char>('a' + i % 26));
      next->Put("default", key, v, dk);
      return db_->Put(sync, cf, key, v, dk);
    } else if (r < 75) {
      next->Delete("default", key);
      return db_->Delete(sync, cf, key);
    } else if (r < 85) {
      const std::string op = "m" + std::to_string(i);
      next->Merge("default", key, op, dk);
      return db_->Merge(sync, cf, key, op, dk);
    } else if (r < 90) {
      const std::string end = key + "5";
      next->DeleteRange("default", key, end);
      return db_->DeleteRange(sync, cf, key, end);
    } else if (r < 94) {
      const uint64_t lo = i > 60 ? i - 60 : 0;
      next->DeleteByDeleteKey("default", lo, lo + 20);
      return db_->DeleteByDeleteKey(cf, lo, lo + 20);
    } else if (r < 97) {
      const uint64_t h = i > 150 ? i - 150 : 0;
      next->AdvanceHorizon("default", h);
      return db_->AdvanceHorizon(cf, h);
    } else if (r < 99) {
      return db_->Flush();
    }
    return db_->CompactAll();
  }

  // Every live entry of the default family equals the model's.
  ::testing::AssertionResult Matches(const Model& m) {
    auto it = db_->NewIterator(ReadOptions(), db_->DefaultColumnFamily());
    const auto& want = m.families.at("default");
    auto w = want.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++w) {
      if (w == want.end()) return ::testing::AssertionFailure() << "extra key " << it->key();
      if (it->key() != w->first || it->value() != w->second.first) {
        return ::testing::AssertionFailure() << "at " << it->key() << ": want " << w->first << "=" << w->second.first
                                             << ", got " << it->value();
      }
    }
    if (!it->status().ok()) return ::testing::AssertionFailure() << it->status().ToString();
    if (w != want.end()) return ::testing::AssertionFailure() << "missing key " << w->first;
    return ::testing::AssertionSuccess();
  }

  // Runs the workload until an op fails (at most `ops` ops). Returns the
  // failed op's status (OK if none failed); the model holds the acknowledged
  // ops, *in_flight the model with the failed op too.
  Status RunUntilError(uint64_t* i, uint64_t ops, Model* in_flight) {
    for (uint64_t end = *i + ops; *i < end; ++*i) {
      Model next;
      Status s = RunOp(*i, &next);
      if (!s.ok()) {
        *in_flight = std::move(next);
        ++*i;
        return s;
      }
      model_ = std::move(next);
    }
    *in_flight = model_;
    return Status::OK();
  }

  // After a fault: close, lose what was not synced, reopen without faults,
  // and find exactly the acknowledged state (or that plus the failed op).
  void CheckRecovery(const Model& in_flight, bool power_loss, const std::string& what) {
    db_.reset();  // closing after an error must not crash or hang
    total_faults += env_->faults_injected();
    env_->ClearFaults();
    if (power_loss) mem_->SimulateCrash();
    Status s = DB::Open(options_, "/db", &db_);
    ASSERT_TRUE(s.ok()) << what << ": reopen after the fault: " << s.ToString();
    ::testing::AssertionResult acked = Matches(model_);
    if (!acked) {
      ASSERT_TRUE(Matches(in_flight)) << what << ": neither the acknowledged state nor it plus the failed op: "
                                      << acked.message();
      model_ = in_flight;
    }
    // And it takes writes again.
    WriteOptions wo;
    wo.sync = true;
    ASSERT_TRUE(db_->Put(wo, db_->DefaultColumnFamily(), "after", "fault").ok()) << what;
    model_.Put("default", "after", "fault", kMaxDeleteKey);
    ASSERT_TRUE(Matches(model_)) << what;
    total_cases++;
  }

  std::unique_ptr<MemEnv> mem_;
  std::unique_ptr<FaultInjectionEnv> env_;
  Options options_;
  std::unique_ptr<DB> db_;
  Model model_;
};

// A fault of each kind after 0, 1, 2, ... operations of that kind, once or
// for good: the workload gets an error, and recovery loses nothing acknowledged.
TEST_F(FaultInjectionTest, EveryFaultAtEveryPositionGivesAnErrorAndACleanReopen) {
  for (FaultKind kind : {FaultKind::kAppend, FaultKind::kSync, FaultKind::kCreate}) {
    for (bool persistent : {false, true}) {
      for (uint64_t after = 0; after < 120; after += (after < 20 ? 1 : 7)) {
        SCOPED_TRACE(std::string(FaultKindName(kind)) + " after " + std::to_string(after) +
                     (persistent ? " (persistent)" : " (once)"));
        Fresh();
        ASSERT_TRUE(DB::Open(options_, "/db", &db_).ok());
        uint64_t i = 0;
        Model in_flight;
        ASSERT_TRUE(RunUntilError(&i, 20, &in_flight).ok());  // some data first
        env_->InjectFault(kind, after, persistent);
        Status s = RunUntilError(&i, 400, &in_flight);
        // Sync writes append and sync on every op: those faults always fire.
        // A create fault may wait for a file that 400 ops do not create.
        if (kind != FaultKind::kCreate) {
          ASSERT_FALSE(s.ok()) << "the fault never reached the caller";
        }
        if (!s.ok()) {
          EXPECT_TRUE(s.IsIOError() || s.IsNoSpace()) << "a write fault reported as " << s.ToString();
        }
        CheckRecovery(in_flight, /*power_loss=*/after % 2 == 0,
                      std::string(FaultKindName(kind)) + " after " + std::to_string(after));
        db_.reset();
      }
    }
  }
  std::printf("[ faults   ] %d cases, %llu faults injected\n", total_cases,
              static_cast<unsigned long long>(total_faults));
}

// A full disk: writes fail with NoSpace, and the database reopens with every
// acknowledged write once space is back.
TEST_F(FaultInjectionTest, FullDiskGivesNoSpaceAndACleanReopen) {
  for (uint64_t limit = 1 << 10; limit < (2 << 20); limit = limit * 3 / 2) {
    SCOPED_TRACE("space limit " + std::to_string(limit));
    Fresh();
    ASSERT_TRUE(DB::Open(options_, "/db", &db_).ok());
    env_->SetSpaceLimit(limit);
    uint64_t i = 0;
    Model in_flight;
    Status s = RunUntilError(&i, 100000, &in_flight);
    ASSERT_TRUE(s.IsNoSpace()) << "a full disk reported as " << s.ToString();
    // With no byte left at all, a write fails rather than half succeeds (a
    // small write may still fit after the failed one: the disk is not full).
    env_->SetSpaceLimit(0);
    EXPECT_FALSE(db_->Put(WriteOptions(), db_->DefaultColumnFamily(), "x", "y").ok());
    CheckRecovery(in_flight, /*power_loss=*/limit % 2 == 0, "space limit " + std::to_string(limit));
    db_.reset();
  }
}

// Rename fails only where CURRENT is replaced: at open, which rolls the
// manifest. The open fails, the old CURRENT stands, and the next open works.
TEST_F(FaultInjectionTest, ARenameFailureAtOpenLeavesTheDatabaseOpenable) {
  ASSERT_TRUE(DB::Open(options_, "/db", &db_).ok());
  uint64_t i = 0;
  Model in_flight;
  ASSERT_TRUE(RunUntilError(&i, 200, &in_flight).ok());
  db_.reset();
  env_->InjectFault(FaultKind::kRename, 0, /*persistent=*/true);
  Status s = DB::Open(options_, "/db", &db_);
  ASSERT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("injected rename failure"), std::string::npos) << s.ToString();
  CheckRecovery(model_, /*power_loss=*/true, "rename");
}

// A kill can cut the journal's last line where it crosses a page of the file.
// The power loss then ignores that line: the file keeps the size its last whole
// line says was synced (not a prefix of the cut number, and no parse error).
TEST(SyncJournalTest, APowerLossIgnoresALastLineTheKillCut) {
  namespace fs = std::filesystem;
  for (const std::string cut : {"", "1"}) {
    const fs::path dir = fs::path(::testing::TempDir()) / ("journal_cut" + cut);
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string file = (dir / "000007.log").string();
    std::ofstream(file) << "0123456789";
    const std::string journal = (dir / "sync.journal").string();
    std::ofstream(journal) << "C\t" << file << "\t\t0\n"
                           << "D\t" << dir.string() << "\t\t0\n"
                           << "S\t" << file << "\t\t5\n"
                           << "S\t" << file << "\t\t" << cut;  // "10" cut short, no newline
    int changed = 0;
    Status s = FaultInjectionEnv::ApplyPowerLoss(journal, &changed);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(changed, 1) << "cut '" << cut << "'";
    EXPECT_EQ(fs::file_size(file), 5u) << "cut '" << cut << "'";
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace lethe
