// Readers running while one writer rewrites groups of keys in atomic batches
// (with range deletes and horizons), memtables switch, files flush and
// compact, and column families come and go. Readers take no lock shared with
// each other or the writer, so this checks what they see:
//  * a batch is seen whole: through a snapshot, an iterator or one MultiGet,
//    every key of a group carries the same round;
//  * nothing acknowledged is missed: a read sees at least the round the
//    writer had finished before the read began;
//  * nothing goes back: a reader never sees a group's round decrease, and a
//    snapshot reads the same each time;
//  * a dropped family's handle gives an error, never a crash.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "lethe/db.h"
#include "lethe/env.h"
#include "lethe/write_batch.h"
#include "util/random.h"

namespace lethe {
namespace {

constexpr int kGroups = 8;
constexpr int kKeysPerGroup = 16;
constexpr int kRounds = 300;
constexpr int kReaders = 2;

std::string Key(int group, int k) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "g%02dk%03d", group, k);
  return buf;
}
std::string GroupBegin(int group) { return Key(group, 0); }
std::string GroupEnd(int group) { return Key(group, kKeysPerGroup); }

std::string Value(int round, int k) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "r%06d:", round);
  return std::string(buf) + std::string(static_cast<size_t>(40 + k), static_cast<char>('a' + round % 26));
}
// The round a value was written in, or -1 if it is not a value of Value().
int RoundOf(const std::string& v) {
  int r = -1;
  return std::sscanf(v.c_str(), "r%06d:", &r) == 1 ? r : -1;
}

class ConcurrentReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = NewMemEnv();
    Options o;
    o.env = env_.get();
    o.write_buffer_size = 24 << 10;  // many memtable switches
    o.page_cache_bytes = 64 << 10;
    o.cf_defaults.page_size = 512;
    o.cf_defaults.pages_per_tile = 4;
    o.cf_defaults.level1_bytes = 64 << 10;
    o.cf_defaults.target_file_size = 16 << 10;
    o.cf_defaults.level0_compaction_trigger = 2;
    ASSERT_TRUE(DB::Open(o, "/db", &db_).ok());
    cf_ = db_->DefaultColumnFamily();
  }
  void TearDown() override { db_.reset(); }

  void Writer() {
    Random rnd(7);
    int side = 0;
    for (int round = 1; round <= kRounds && !failed_; round++) {
      for (int g = 0; g < kGroups; g++) {
        WriteBatch b;
        if (round % 5 == 0) b.DeleteRange(cf_, GroupBegin(g), GroupEnd(g));
        for (int k = 0; k < kKeysPerGroup; k++) b.Put(cf_, Key(g, k), Value(round, k), static_cast<uint64_t>(round));
        Check(db_->Write(WriteOptions(), b), "write");
        committed_[g].store(round, std::memory_order_release);
      }
      // Every current entry has delete key round - 1 or more: the horizon
      // removes old versions only.
      if (round % 10 == 0) Check(db_->AdvanceHorizon(cf_, static_cast<uint64_t>(round - 5)), "horizon");
      if (rnd.OneIn(25)) Check(db_->Flush(), "flush");
      if (rnd.OneIn(100)) Check(db_->CompactAll(), "compact");
      if (round % 40 == 0) ReplaceSideFamily(&side);
      AwaitARead();
    }
    done_ = true;
  }

  // Each round waits for a read to finish, so the readers run alongside the
  // writer however the threads are scheduled (a loaded machine may otherwise
  // run all rounds before a reader starts).
  void AwaitARead() {
    const uint64_t before = reads_.load();
    while (reads_.load() == before && !failed_) std::this_thread::yield();
  }

  // A family that readers read while it is dropped under them.
  void ReplaceSideFamily(int* n) {
    ColumnFamilyHandle* h = nullptr;
    Check(db_->CreateColumnFamily("side" + std::to_string((*n)++), ColumnFamilyOptions(), &h), "create");
    if (h == nullptr) return;
    Check(db_->Put(WriteOptions(), h, "x", "side"), "side put");
    ColumnFamilyHandle* old = side_.exchange(h);
    if (old != nullptr) Check(db_->DropColumnFamily(old), "drop");
  }

  void Reader(int id) {
    Random rnd(100 + static_cast<uint64_t>(id));
    std::vector<int> last(kGroups, 0);
    while (!done_ && !failed_) {
      const int g = static_cast<int>(rnd.Uniform(kGroups));
      const int at_least = committed_[g].load(std::memory_order_acquire);
      int seen = -1;
      switch (rnd.Uniform(5)) {
        case 0: seen = ReadGroupByGets(g, at_least, nullptr); break;
        case 1: {
          // A snapshot reads the same however often it is read.
          const Snapshot* snap = db_->GetSnapshot();
          seen = ReadGroupByGets(g, at_least, snap);
          std::this_thread::yield();
          const int again = ReadGroupByGets(g, at_least, snap);
          db_->ReleaseSnapshot(snap);
          if (again != seen) Fail("a snapshot read round " + std::to_string(seen) + ", then " + std::to_string(again));
          break;
        }
        case 2: seen = ReadGroupByIterator(g, at_least); break;
        case 3: seen = ReadGroupByMultiGet(g, at_least); break;
        default: ReadSideFamily(); continue;
      }
      if (seen >= 0 && seen < last[static_cast<size_t>(g)]) Fail("group " + std::to_string(g) + " went back to round " + std::to_string(seen));
      last[static_cast<size_t>(g)] = std::max(last[static_cast<size_t>(g)], seen);
      reads_++;
    }
  }

  // The group's smallest round; with a snapshot every key must agree.
  int ReadGroupByGets(int g, int at_least, const Snapshot* snap) {
    ReadOptions ro;
    ro.snapshot = snap;
    int lowest = kRounds + 1, highest = -1;
    for (int k = 0; k < kKeysPerGroup; k++) {
      std::string v;
      Status s = db_->Get(ro, cf_, Key(g, k), &v);
      if (s.IsNotFound() && at_least == 0) return -1;  // before the first write
      if (!s.ok()) return Fail("get " + Key(g, k) + ": " + s.ToString());
      const int r = RoundOf(v);
      if (r < at_least || v != Value(r, k)) return Fail("get " + Key(g, k) + " saw '" + v + "' after round " + std::to_string(at_least));
      lowest = std::min(lowest, r);
      highest = std::max(highest, r);
    }
    if (snap != nullptr && lowest != highest) return Fail("a snapshot saw a batch in part: rounds " + std::to_string(lowest) + ".." + std::to_string(highest));
    return lowest;
  }

  // One batch is one view: every key agrees.
  int ReadGroupByMultiGet(int g, int at_least) {
    std::vector<std::string> keys;
    for (int k = kKeysPerGroup - 1; k >= 0; k--) keys.push_back(Key(g, k));  // not in order
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<std::string> values(keys.size());
    std::vector<Status> statuses(keys.size());
    db_->MultiGet(ReadOptions(), cf_, keys.size(), views.data(), values.data(), statuses.data());
    int round = -1;
    for (size_t i = 0; i < keys.size(); i++) {
      if (statuses[i].IsNotFound() && at_least == 0) return -1;
      if (!statuses[i].ok()) return Fail("multiget " + keys[i] + ": " + statuses[i].ToString());
      const int k = kKeysPerGroup - 1 - static_cast<int>(i);
      if (round < 0) round = RoundOf(values[i]);
      if (RoundOf(values[i]) != round || values[i] != Value(round, k)) return Fail("a multiget saw a batch in part at " + keys[i]);
    }
    if (round < at_least) return Fail("multiget saw round " + std::to_string(round) + " after round " + std::to_string(at_least));
    return round;
  }

  int ReadGroupByIterator(int g, int at_least) {
    auto it = db_->NewIterator(ReadOptions(), cf_);
    int k = 0, round = -1;
    for (it->Seek(GroupBegin(g)); it->Valid() && it->key() < GroupEnd(g); it->Next(), k++) {
      const std::string v(it->value());
      if (it->key() != Key(g, k)) return Fail("iterator: expected " + Key(g, k) + ", got " + std::string(it->key()));
      if (round < 0) round = RoundOf(v);
      if (RoundOf(v) != round || v != Value(round, k)) return Fail("an iterator saw a batch in part at " + Key(g, k));
    }
    if (!it->status().ok()) return Fail("iterator: " + it->status().ToString());
    if (k == 0 && at_least == 0) return -1;
    if (k != kKeysPerGroup || round < at_least) return Fail("iterator saw " + std::to_string(k) + " keys of round " + std::to_string(round) + " after round " + std::to_string(at_least));
    return round;
  }

  void ReadSideFamily() {
    ColumnFamilyHandle* h = side_.load();
    if (h == nullptr) return;
    std::string v;
    Status s = db_->Get(ReadOptions(), h, "x", &v);
    if (!(s.ok() && v == "side") && !s.IsInvalidArgument()) Fail("side family: " + s.ToString() + " '" + v + "'");
  }

  void Check(const Status& s, const char* what) {
    if (!s.ok()) Fail(std::string(what) + ": " + s.ToString());
  }
  int Fail(const std::string& why) {
    if (!failed_.exchange(true)) failure_ = why;
    return -1;
  }

  std::unique_ptr<Env> env_;
  std::unique_ptr<DB> db_;
  ColumnFamilyHandle* cf_ = nullptr;
  std::atomic<int> committed_[kGroups] = {};
  std::atomic<ColumnFamilyHandle*> side_{nullptr};
  std::atomic<bool> done_{false}, failed_{false};
  std::atomic<uint64_t> reads_{0};
  std::string failure_;  // written once, by the thread that set failed_
};

TEST_F(ConcurrentReadTest, ReadersSeeWholeBatchesNeverMissOneAndNeverGoBack) {
  std::vector<std::thread> readers;
  for (int i = 0; i < kReaders; i++) readers.emplace_back([this, i] { Reader(i); });
  Writer();
  for (auto& t : readers) t.join();
  ASSERT_FALSE(failed_.load()) << failure_;
  DbStatistics st = db_->GetStatistics();
  EXPECT_GT(st.flushes, 10u) << "memtables switched under the readers";
  EXPECT_GT(st.compactions_level0 + st.compactions_saturation, 0u) << "files were compacted under the readers";
}

}  // namespace
}  // namespace lethe
