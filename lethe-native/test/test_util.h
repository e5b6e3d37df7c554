// Helpers shared by the native tests: golden files, a database in a MemEnv
// with the small accessors most DB tests need, and gates that hold up the
// creation or removal of table files, or a thread at a kill point.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include "env/fault_injection_env.h"
#include "lethe/db.h"
#include "lethe/env.h"
#include "util/kill_point.h"

namespace lethe {

// Expects `actual` to equal testdata/<name>. With LETHE_UPDATE_GOLDEN=1 the
// file is rewritten first (review the diff before committing it).
inline void ExpectMatchesGolden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(LETHE_TESTDATA_DIR) + "/" + name;
  if (std::getenv("LETHE_UPDATE_GOLDEN") != nullptr) std::ofstream(path) << actual;
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path << " (run with LETHE_UPDATE_GOLDEN=1)";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(actual, golden.str());
}

// `n` random bytes from `rnd`: a value no codec shrinks, so that the bytes
// a flush or a checkpoint copy writes follow the bytes written.
inline std::string IncompressibleValue(std::mt19937_64& rnd, size_t n) {
  std::string v(n, '\0');
  for (char& c : v) c = static_cast<char>(rnd() & 0xff);
  return v;
}

// A place where threads wait until Release; Await tells whether one got there.
class Gate {
 public:
  void Hold() {
    std::unique_lock<std::mutex> l(mu_);
    held_ = true;
    cv_.notify_all();
    cv_.wait(l, [this] { return released_; });
  }
  // Whether a thread reached Hold within `timeout`.
  bool Await(std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, timeout, [this] { return held_; });
  }
  // Lets every thread through, now and later.
  void Release() {
    {
      std::lock_guard<std::mutex> l(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false, released_ = false;
};

// Holds up every creation or removal of a table file through `env` (a slow
// file system) whose name starts with `prefix`, until Release: the thread
// creating or removing it waits inside the call.
class TableFileGate : public Gate {
 public:
  enum class Op { kCreate, kRemove };
  TableFileGate(FaultInjectionEnv* env, Op op, std::string prefix = "") {
    auto hook = [this, prefix = std::move(prefix)](const std::string& fname) {
      if (fname.ends_with(".sst") && fname.starts_with(prefix)) Hold();
    };
    if (op == Op::kCreate) {
      env->SetCreateHook(std::move(hook));
    } else {
      env->SetRemoveHook(std::move(hook));
    }
  }
};

// Holds every thread that reaches the kill point `name` (util/kill_point.h)
// until Release or the gate's end. One gate at a time: the handler is global.
class KillPointGate : public Gate {
 public:
  explicit KillPointGate(const char* name) : name_(name) {
    current_.store(this);
    SetKillPointHandler(&OnPoint);
  }
  // Lets held threads go and waits until none is left inside the gate.
  ~KillPointGate() {
    current_.store(nullptr);
    Release();
    while (inside_.load() != 0) std::this_thread::yield();
  }

 private:
  static void OnPoint(const char* name) {
    inside_.fetch_add(1);
    KillPointGate* gate = current_.load();
    if (gate != nullptr && gate->name_ == name) gate->Hold();
    inside_.fetch_sub(1);
  }
  inline static std::atomic<KillPointGate*> current_{nullptr};
  inline static std::atomic<int> inside_{0};
  std::string name_;
};

// A database at "/db" in a MemEnv. Subclasses fill options_ (env_ is set
// here) and call Reopen().
class MemDbTest : public ::testing::Test {
 protected:
  MemDbTest() : env_(NewMemEnv()) { options_.env = env_.get(); }

  void Reopen() {
    db_.reset();
    ASSERT_TRUE(DB::Open(options_, "/db", &db_).ok());
    cf_ = db_->DefaultColumnFamily();
  }
  std::string Get(std::string_view key, const Snapshot* snap = nullptr) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::string v;
    Status s = db_->Get(ro, cf_, key, &v);
    if (s.IsNotFound()) return "NOT_FOUND";
    EXPECT_TRUE(s.ok()) << s.ToString();
    return v;
  }
  // "key=value " for every live entry of `cf` of `db` (null: its default family).
  static std::string ScanOf(DB* db, const ReadOptions& ro = ReadOptions(), ColumnFamilyHandle* cf = nullptr) {
    std::string r;
    auto it = db->NewIterator(ro, cf != nullptr ? cf : db->DefaultColumnFamily());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      r.append(it->key()).append("=").append(it->value()).append(" ");
    }
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    return r;
  }
  std::string Scan(const ReadOptions& ro = ReadOptions()) { return ScanOf(db_.get(), ro); }
  void Put(std::string_view k, std::string_view v, uint64_t dk = kMaxDeleteKey) {
    ASSERT_TRUE(db_->Put(WriteOptions(), cf_, k, v, dk).ok());
  }

  std::unique_ptr<MemEnv> env_;
  Options options_;
  std::unique_ptr<DB> db_;
  ColumnFamilyHandle* cf_ = nullptr;
};

// A MemDbTest whose database writes small memtables, pages and files, so
// that a few thousand entries make several files and levels.
class SmallFilesDbTest : public MemDbTest {
 protected:
  void SetUp() override {
    options_.write_buffer_size = 64 * 1024;
    options_.cf_defaults.page_size = 256;
    options_.cf_defaults.level1_bytes = 64 * 1024;
    options_.cf_defaults.target_file_size = 16 * 1024;
    Reopen();
  }
};

}  // namespace lethe
