// The randomized model-based test: the engine against a plain in-memory model
// (std::map per column family), under random puts, deletes, sort-key range
// deletes, merges, batches, snapshots, point lookups one by one and batched, iterators with bounds (also read long
// after they were opened), flushes, compactions, reopens, checkpoints, column
// family changes, crashes, and
// secondary deletes by delete key (horizons and delete-key ranges, with the
// page drops they cause).
//
// Every run prints its seed and option set on failure together with the last
// operations. Replay one case with LETHE_MODEL_SEED=<seed>; scale the number
// of operations with LETHE_MODEL_OPS=<per case> and of seeds with
// LETHE_MODEL_SEEDS=<count>.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lethe/db.h"
#include "lethe/env.h"
#include "model.h"
#include "model_option_sets.h"
#include "util/random.h"

namespace lethe {
namespace {

using model::Entry;
using model::Family;
using model::Model;
using model::OptionSet;
using model::kOptionSets;

int64_t EnvInt(const char* name, int64_t dflt) {
  const char* v = std::getenv(name);
  return v == nullptr ? dflt : std::strtoll(v, nullptr, 10);
}

class ModelTest : public ::testing::TestWithParam<std::tuple<int, uint64_t>> {
 protected:
  void SetUp() override {
    set_ = kOptionSets[std::get<0>(GetParam())];
    seed_ = std::get<1>(GetParam());
    rnd_ = std::make_unique<Random>(seed_);
    env_ = NewMemEnv();
    options_.env = env_.get();
    options_.clock = &clock_;
    options_.write_buffer_size = set_.write_buffer;
    options_.use_wal = set_.use_wal;
    options_.background_compactions = set_.background;
    options_.page_cache_bytes = 256 << 10;
    options_.max_open_files = set_.max_open_files;
    if (set_.memory_budget > 0) OpenNeighbour();
    cf_options_.page_size = set_.page_size;
    cf_options_.pages_per_tile = set_.pages_per_tile;
    cf_options_.index_partition_size = set_.index_partition_size;
    cf_options_.level1_bytes = set_.level1_bytes;
    cf_options_.target_file_size = set_.target_file_size;
    cf_options_.size_ratio = set_.size_ratio;
    cf_options_.dynamic_level_bytes = set_.dynamic_level_bytes;
    cf_options_.level0_compaction_trigger = 3;
    cf_options_.delete_persistence_threshold_us = set_.delete_persistence_threshold_us;
    cf_options_.fade_file_pick = set_.fade_file_pick;
    cf_options_.compression = set_.compression;
    cf_options_.bottommost_compression = set_.bottommost_compression;
    cf_options_.flush_compression = set_.flush_compression;
    cf_options_.compaction_style = set_.compaction_style;
    cf_options_.time_ordered_max_files = set_.time_ordered_max_files;
    options_.cf_defaults = cf_options_;
    write_options_.sync = set_.crashes;
    ASSERT_TRUE(DB::Open(options_, "/db", &db_).ok());
    model_.families["default"];
  }

  void TearDown() override {
    open_copy_ = OpenCopy{};  // abandoned: before the database goes
    ReleaseSnapshots();
    db_.reset();
    neighbour_.reset();
  }

  // A database on the same budget that holds a memtable larger than the
  // tested one's at first (the budget flushes it) and tables of its own with
  // the same file numbers (the caches must keep them apart).
  void OpenNeighbour() {
    // Tables bound: they open and leave the budget's table cache.
    ASSERT_TRUE(MemoryBudget::New(set_.memory_budget, 0.75, &options_.memory_budget, true).ok());
    Options o = options_;
    o.cf_defaults.page_size = 256;
    ASSERT_TRUE(DB::Open(o, "/neighbour", &neighbour_).ok());
    for (int i = 0; i < 1500; i++) {
      std::string k = "key" + std::to_string(i % 200) + "/" + std::to_string(i);
      ASSERT_TRUE(neighbour_->Put(WriteOptions(), neighbour_->DefaultColumnFamily(), k, std::string(100, 'n')).ok());
      if (i == 500) {
        ASSERT_TRUE(neighbour_->Flush().ok());
      }
    }
  }

  // ---- Generators.

  std::string RandomKey() {
    // A skewed key space: a hot set, a wider set, and awkward bytes.
    uint64_t r = rnd_->Uniform(100);
    std::string k;
    if (r < 60) {
      k = "key" + std::to_string(rnd_->Uniform(set_.compacts_in_memory ? 16 : 200));
    } else if (r < 90) {
      k = "k" + std::to_string(rnd_->Uniform(set_.compacts_in_memory ? 32 : 3000));
    } else if (r < 95) {
      k = std::string(1, static_cast<char>(rnd_->Uniform(3) == 0 ? '\0' : '\xff')) + std::to_string(rnd_->Uniform(20));
    } else {
      k = std::string(static_cast<size_t>(1 + rnd_->Uniform(24)), static_cast<char>('a' + rnd_->Uniform(3)));
    }
    return k;
  }
  std::string RandomValue() {
    size_t n = rnd_->OneIn(50) ? 2000 + rnd_->Uniform(2000) : rnd_->Uniform(200);
    std::string v(n, static_cast<char>('a' + rnd_->Uniform(26)));
    if (n > 0) v[0] = static_cast<char>('A' + step_ % 26);
    return v;
  }
  // Delete keys are monotone per key: a step counter, or "never" for a fixed
  // subset of keys.
  uint64_t DeleteKeyFor(const std::string& k) {
    return std::hash<std::string>()(k) % 5 == 0 ? kMaxDeleteKey : static_cast<uint64_t>(step_);
  }
  std::string RandomFamily() {
    auto it = model_.families.begin();
    std::advance(it, static_cast<long>(rnd_->Uniform(model_.families.size())));
    return it->first;
  }
  ColumnFamilyHandle* Handle(const std::string& name) {
    ColumnFamilyHandle* h = db_->GetColumnFamily(name);
    EXPECT_NE(h, nullptr) << name;
    return h;
  }

  // ---- Checks.

  ::testing::AssertionResult CheckGet(const Family& expect, const std::string& cf, const std::string& k,
                                      const Snapshot* snap) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::string v;
    uint64_t dk = 0;
    Status s = db_->Get(ro, Handle(cf), k, &v, &dk);
    auto it = expect.find(k);
    if (it == expect.end()) {
      if (!s.IsNotFound()) return ::testing::AssertionFailure() << "Get(" << cf << "," << k << ") expected NotFound, got " << s.ToString() << " value size " << v.size();
      return ::testing::AssertionSuccess();
    }
    if (!s.ok()) return ::testing::AssertionFailure() << "Get(" << cf << "," << k << ") failed: " << s.ToString();
    if (v != it->second.first) return ::testing::AssertionFailure() << "Get(" << cf << "," << k << ") value mismatch: got '" << v.substr(0, 40) << "' (" << v.size() << " bytes), want '" << it->second.first.substr(0, 40) << "' (" << it->second.first.size() << ")";
    if (dk != it->second.second) return ::testing::AssertionFailure() << "Get(" << cf << "," << k << ") delete key " << dk << " want " << it->second.second;
    return CheckGetByDeleteKey(it->second, cf, k, snap);
  }

  // A value that is one plain entry is found by its delete key too: the files
  // passed over for holding other delete keys cannot hold it.
  ::testing::AssertionResult CheckGetByDeleteKey(const Entry& e, const std::string& cf, const std::string& k,
                                                 const Snapshot* snap) {
    if (e.parts.size() != 1) return ::testing::AssertionSuccess();
    ReadOptions ro;
    ro.snapshot = snap;
    ro.has_delete_key = true;
    ro.delete_key = e.second;
    std::string v;
    Status s = db_->Get(ro, Handle(cf), k, &v);
    if (!s.ok() || v != e.first) {
      return ::testing::AssertionFailure() << "Get(" << cf << "," << k << ") by delete key " << e.second << ": "
                                           << s.ToString() << " '" << v.substr(0, 40) << "'";
    }
    return ::testing::AssertionSuccess();
  }

  // A batch of random keys, some repeated, against the model.
  ::testing::AssertionResult CheckMultiGet(const Family& expect, const std::string& cf, const Snapshot* snap) {
    std::vector<std::string> keys(1 + rnd_->Uniform(20));
    for (size_t i = 0; i < keys.size(); i++) keys[i] = i > 0 && rnd_->OneIn(5) ? keys[rnd_->Uniform(i)] : RandomKey();
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<std::string> values(keys.size());
    std::vector<Status> statuses(keys.size());
    std::vector<uint64_t> dks(keys.size());
    ReadOptions ro;
    ro.snapshot = snap;
    db_->MultiGet(ro, Handle(cf), keys.size(), views.data(), values.data(), statuses.data(), dks.data());
    for (size_t i = 0; i < keys.size(); i++) {
      auto it = expect.find(keys[i]);
      const Status& s = statuses[i];
      const std::string what = "MultiGet(" + cf + ") key " + std::to_string(i) + " '" + keys[i] + "'";
      if (it == expect.end()) {
        if (!s.IsNotFound()) return ::testing::AssertionFailure() << what << " expected NotFound, got " << s.ToString();
        continue;
      }
      if (!s.ok()) return ::testing::AssertionFailure() << what << " failed: " << s.ToString();
      if (values[i] != it->second.first || dks[i] != it->second.second) {
        return ::testing::AssertionFailure() << what << " got '" << values[i].substr(0, 40) << "' dk " << dks[i];
      }
    }
    return ::testing::AssertionSuccess();
  }

  ReadOptions RandomBounds(const Snapshot* snap) {
    ReadOptions ro;
    ro.snapshot = snap;
    if (rnd_->OneIn(2)) {
      ro.lower_bound = RandomKey();
      ro.has_lower_bound = true;
    }
    if (rnd_->OneIn(2)) {
      ro.upper_bound = RandomKey();
      ro.has_upper_bound = true;
    }
    return ro;
  }

  ::testing::AssertionResult CheckIterator(DB* db, const Family& expect, ColumnFamilyHandle* cf, const Snapshot* snap,
                                           size_t limit) {
    ReadOptions ro = RandomBounds(snap);
    auto it = db->NewIterator(ro, cf);
    return CheckIterator(it.get(), ro, expect, limit);
  }

  // `it` was made with `ro`.
  ::testing::AssertionResult CheckIterator(Iterator* it, const ReadOptions& ro, const Family& expect, size_t limit) {
    const std::string& lo = ro.lower_bound;
    const std::string& hi = ro.upper_bound;
    auto m = ro.has_lower_bound ? expect.lower_bound(lo) : expect.begin();
    auto in_bounds = [&](std::map<std::string, Entry>::const_iterator x) {
      return x != expect.end() && (!ro.has_upper_bound || x->first < hi);
    };
    size_t n = 0;
    for (it->SeekToFirst(); n < limit; it->Next(), ++m, ++n) {
      bool want = in_bounds(m);
      if (it->Valid() != want) {
        return ::testing::AssertionFailure() << "scan: valid=" << it->Valid() << " want " << want << " at entry " << n
                                             << (want ? " key " + m->first : std::string()) << (it->Valid() ? " got " + std::string(it->key()) : std::string()) << " status " << it->status().ToString();
      }
      if (!want) break;
      if (it->key() != m->first || it->value() != m->second.first || it->delete_key() != m->second.second) {
        return ::testing::AssertionFailure() << "scan entry " << n << ": got " << it->key() << "='" << (it->value().size() > 60 ? std::string(it->value().substr(it->value().size() - 60)) : std::string(it->value()))
                                             << "' dk " << it->delete_key() << " want " << m->first << "='"
                                             << m->second.first.substr(0, 60) << "' dk " << m->second.second;
      }
    }
    if (!it->status().ok()) return ::testing::AssertionFailure() << "scan status " << it->status().ToString();
    for (int s = 0; s < 3; s++) {
      std::string target = RandomKey();
      it->Seek(target);
      std::string effective = ro.has_lower_bound && target < lo ? lo : target;
      auto want = expect.lower_bound(effective);
      bool valid = in_bounds(want);
      if (it->Valid() != valid || (valid && (it->key() != want->first || it->value() != want->second.first))) {
        return ::testing::AssertionFailure() << "Seek(" << target << "): valid=" << it->Valid()
                                             << (it->Valid() ? " got " + std::string(it->key()) : std::string())
                                             << " want " << (valid ? want->first : std::string("end"));
      }
    }
    return CheckBackward(it, ro, expect, limit);
  }

  // Backward scan from the end, SeekForPrev, and random walks that change
  // direction, against the model (`it` was made with `ro`).
  ::testing::AssertionResult CheckBackward(Iterator* it, const ReadOptions& ro, const Family& expect, size_t limit) {
    // The model's keys within the bounds, as positions an iterator may hold.
    std::vector<Family::const_iterator> keys;
    for (auto m = ro.has_lower_bound ? expect.lower_bound(ro.lower_bound) : expect.begin();
         m != expect.end() && (!ro.has_upper_bound || m->first < ro.upper_bound); ++m) {
      keys.push_back(m);
    }
    auto same = [&](long pos, const std::string& what) -> ::testing::AssertionResult {
      const bool want = pos >= 0 && pos < static_cast<long>(keys.size());
      if (it->Valid() != want) {
        return ::testing::AssertionFailure() << what << ": valid=" << it->Valid() << " want " << want
                                             << (it->Valid() ? " got " + std::string(it->key()) : std::string())
                                             << " status " << it->status().ToString();
      }
      if (want && (it->key() != keys[pos]->first || it->value() != keys[pos]->second.first ||
                   it->delete_key() != keys[pos]->second.second)) {
        return ::testing::AssertionFailure() << what << ": got " << it->key() << " dk " << it->delete_key()
                                             << " want " << keys[pos]->first << " dk " << keys[pos]->second.second;
      }
      return ::testing::AssertionSuccess();
    };
    long pos = static_cast<long>(keys.size()) - 1;
    size_t n = 0;
    for (it->SeekToLast(); n < limit; it->Prev(), --pos, ++n) {
      auto r = same(pos, "backward scan entry " + std::to_string(n));
      if (!r) return r;
      if (pos < 0) break;
    }
    if (!it->status().ok()) return ::testing::AssertionFailure() << "backward scan status " << it->status().ToString();
    for (int s = 0; s < 3; s++) {
      const std::string target = RandomKey();
      it->SeekForPrev(target);
      // The last key <= target.
      pos = std::upper_bound(keys.begin(), keys.end(), target,
                             [](const std::string& t, Family::const_iterator k) { return t < k->first; }) -
            keys.begin() - 1;
      auto r = same(pos, "SeekForPrev(" + target + ")");
      if (!r) return r;
      for (int step = 0; step < 20 && pos >= 0 && pos < static_cast<long>(keys.size()); step++) {
        const bool next = rnd_->OneIn(2);
        next ? it->Next() : it->Prev();
        pos += next ? 1 : -1;
        r = same(pos, std::string("after SeekForPrev(") + target + ") step " + std::to_string(step) +
                          (next ? " Next" : " Prev"));
        if (!r) return r;
      }
    }
    return ::testing::AssertionSuccess();
  }

  ::testing::AssertionResult CheckEverything(DB* db, const Model& model) {
    for (const auto& [name, family] : model.families) {
      ColumnFamilyHandle* cf = db->GetColumnFamily(name);
      if (cf == nullptr) return ::testing::AssertionFailure() << "missing column family " << name;
      auto it = db->NewIterator(ReadOptions(), cf);
      auto m = family.begin();
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
        if (m == family.end()) return ::testing::AssertionFailure() << name << ": extra key " << it->key();
        if (it->key() != m->first || it->value() != m->second.first || it->delete_key() != m->second.second) {
          return ::testing::AssertionFailure() << name << ": got " << it->key() << " want " << m->first;
        }
      }
      if (!it->status().ok()) return ::testing::AssertionFailure() << it->status().ToString();
      if (m != family.end()) return ::testing::AssertionFailure() << name << ": missing key " << m->first;
    }
    if (db->ListColumnFamilies().size() != model.families.size()) {
      return ::testing::AssertionFailure() << "column family count " << db->ListColumnFamilies().size() << " want "
                                           << model.families.size();
    }
    return ::testing::AssertionSuccess();
  }

  // ---- Steps.

  void Record(std::string op) {
    history_.push_back("#" + std::to_string(step_) + " " + std::move(op));
    if (history_.size() > 3000) history_.pop_front();
  }
  std::string History() const {
    std::string h = "seed " + std::to_string(seed_) + ", option set " + set_.name + ", last operations:\n";
    for (const auto& s : history_) h += "  " + s + "\n";
    return h;
  }

  void ReleaseSnapshots() {
    for (auto& [snap, model] : snapshots_) db_->ReleaseSnapshot(snap);
    snapshots_.clear();
    held_.clear();
  }

  void Reopen(bool crash) {
    FinishOpenCopy();
    ReleaseSnapshots();
    if (!set_.use_wal) {
      ASSERT_TRUE(db_->Flush().ok());
    }
    CountFlushes();
    db_.reset();
    if (crash) env_->SimulateCrash();
    Status s = DB::Open(options_, "/db", &db_);
    ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << History();
    ASSERT_TRUE(CheckEverything(db_.get(), model_)) << History();
  }

  void DoBatch() {
    WriteBatch batch;
    int n = 2 + static_cast<int>(rnd_->Uniform(19));
    Model next = model_;
    std::string desc = "batch:";
    for (int i = 0; i < n; i++) {
      std::string cf = RandomFamily();
      std::string k = RandomKey();
      uint64_t r = rnd_->Uniform(10);
      if (DeleteFree() && (r == 5 || r == 6 || r == 9)) r = 0;  // deletes become puts
      if (r < 5) {
        std::string v = RandomValue();
        uint64_t dk = DeleteKeyFor(k);
        batch.Put(Handle(cf), k, v, dk);
        next.Put(cf, k, v, dk);
        desc += " put(" + cf + "," + k + ")";
      } else if (r < 7) {
        // Half of the deletes carry a delete key (a secondary delete may remove them).
        batch.Delete(Handle(cf), k, rnd_->OneIn(2) ? DeleteKeyFor(k) : kMaxDeleteKey);
        next.Delete(cf, k);
        desc += " del(" + cf + "," + k + ")";
      } else if (r < 9) {
        std::string op = "m" + std::to_string(step_);
        uint64_t dk = DeleteKeyFor(k);
        batch.Merge(Handle(cf), k, op, dk);
        next.Merge(cf, k, op, dk);
        desc += " merge(" + cf + "," + k + ")";
      } else {
        std::string e = RandomKey();
        if (k == e) continue;
        if (e < k) std::swap(k, e);
        batch.DeleteRange(Handle(cf), k, e);
        next.DeleteRange(cf, k, e);
        desc += " delrange(" + cf + "," + k + "," + e + ")";
      }
    }
    Record(desc);
    Status s = db_->Write(write_options_, batch);
    ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << History();
    model_ = std::move(next);
  }

  void Step() {
    step_++;
    clock_.Advance(1000);
    uint64_t r = rnd_->Uniform(1000);
    std::string cf = RandomFamily();
    std::string k = RandomKey();
    Status s;
    if (DeleteFree() && r >= 350 && r < 580 && (r < 450 || r >= 550)) r = 0;  // deletes become puts
    if (r < 350) {
      std::string v = RandomValue();
      uint64_t dk = DeleteKeyFor(k);
      Record("put(" + cf + "," + k + ", " + std::to_string(v.size()) + " bytes)");
      s = db_->Put(write_options_, Handle(cf), k, v, dk);
      model_.Put(cf, k, v, dk);
    } else if (r < 450) {
      uint64_t dk = rnd_->OneIn(2) ? DeleteKeyFor(k) : kMaxDeleteKey;
      Record("delete(" + cf + "," + k + ", dk " + std::to_string(dk) + ")");
      s = db_->Delete(write_options_, Handle(cf), k, dk);
      model_.Delete(cf, k);
    } else if (r < 550) {
      std::string op = "op" + std::to_string(step_);
      uint64_t dk = DeleteKeyFor(k);
      Record("merge(" + cf + "," + k + "," + op + ")");
      s = db_->Merge(write_options_, Handle(cf), k, op, dk);
      model_.Merge(cf, k, op, dk);
    } else if (r < 580) {
      std::string e = rnd_->OneIn(5) ? k + std::string(1, '\xff') : RandomKey();
      if (e == k) return;
      if (e < k) std::swap(k, e);
      Record("delete_range(" + cf + "," + k + "," + e + ")");
      s = db_->DeleteRange(write_options_, Handle(cf), k, e);
      model_.DeleteRange(cf, k, e);
    } else if (r < 660) {
      DoBatch();
      return;
    } else if (r < 810) {
      if (!snapshots_.empty() && rnd_->OneIn(2)) {
        auto& [snap, model] = snapshots_[rnd_->Uniform(snapshots_.size())];
        auto f = model.families.find(cf);
        if (f != model.families.end() && rnd_->OneIn(4)) {
          Record("multiget-at-snapshot(" + cf + ")");
          ASSERT_TRUE(CheckMultiGet(f->second, cf, snap)) << History();
        } else if (f != model.families.end()) {
          Record("get-at-snapshot(" + cf + "," + k + ")");
          ASSERT_TRUE(CheckGet(f->second, cf, k, snap)) << History();
        }
      } else if (rnd_->OneIn(4)) {
        Record("multiget(" + cf + ")");
        ASSERT_TRUE(CheckMultiGet(model_.families[cf], cf, nullptr)) << History();
      } else {
        Record("get(" + cf + "," + k + ")");
        ASSERT_TRUE(CheckGet(model_.families[cf], cf, k, nullptr)) << History();
      }
      return;
    } else if (r < 840) {
      if (!snapshots_.empty() && rnd_->OneIn(3)) {
        auto& [snap, model] = snapshots_[rnd_->Uniform(snapshots_.size())];
        auto f = model.families.find(cf);
        if (f == model.families.end()) return;
        Record("scan-at-snapshot(" + cf + ")");
        ASSERT_TRUE(CheckIterator(db_.get(), f->second, Handle(cf), snap, 200)) << History();
      } else {
        Record("scan(" + cf + ")");
        ASSERT_TRUE(CheckIterator(db_.get(), model_.families[cf], Handle(cf), nullptr, 200)) << History();
      }
      return;
    } else if (r < 870) {
      if (snapshots_.size() < 4 && rnd_->OneIn(2)) {
        Record("snapshot");
        snapshots_.emplace_back(db_->GetSnapshot(), model_);
      } else if (!snapshots_.empty()) {
        Record("release-snapshot");
        size_t i = rnd_->Uniform(snapshots_.size());
        db_->ReleaseSnapshot(snapshots_[i].first);
        snapshots_.erase(snapshots_.begin() + static_cast<long>(i));
      }
      return;
    } else if (r < 903 && set_.compacts_in_memory && !rnd_->OneIn(100)) {
      return;  // see OptionSet::compacts_in_memory
    } else if (r < 890) {
      Record("flush");
      s = db_->Flush();
    } else if (r < 895) {
      Record("compact-all");
      s = db_->CompactAll();
    } else if (r < 900) {
      Record("reopen");
      Reopen(false);
      return;
    } else if (r < 903) {
      Record("checkpoint");
      DoCheckpoint();
      return;
    } else if (r < 906) {
      if (model_.families.size() < 4 && rnd_->OneIn(2)) {
        std::string name = "cf" + std::to_string(step_);
        Record("create-cf(" + name + ")");
        ColumnFamilyHandle* h;
        s = db_->CreateColumnFamily(name, cf_options_, &h);
        model_.families[name];
      } else if (cf != "default") {
        Record("drop-cf(" + cf + ")");
        s = db_->DropColumnFamily(Handle(cf));
        model_.families.erase(cf);
        model_.horizons.erase(cf);
        for (auto& [snap, model] : snapshots_) model.families.erase(cf);
      }
    } else if (r < 922) {
      // Delete keys are step numbers: a horizon some steps back, or a range
      // of recent steps.
      uint64_t now = static_cast<uint64_t>(step_);
      if (rnd_->OneIn(2) || DeleteFree()) {
        uint64_t h = now - std::min<uint64_t>(now, rnd_->Uniform(400));
        Record("advance-horizon(" + cf + "," + std::to_string(h) + ")");
        s = db_->AdvanceHorizon(Handle(cf), h);
        model_.AdvanceHorizon(cf, h);
      } else {
        uint64_t lo = now - std::min<uint64_t>(now, rnd_->Uniform(3000));
        uint64_t hi = rnd_->OneIn(10) ? kMaxDeleteKey : lo + rnd_->Uniform(500);
        Record("delete-by-delete-key(" + cf + "," + std::to_string(lo) + "," + std::to_string(hi) + ")");
        s = db_->DeleteByDeleteKey(Handle(cf), lo, hi);
        model_.DeleteByDeleteKey(cf, lo, hi);
      }
    } else if (r < 925 && set_.crashes) {
      Record("crash");
      Reopen(true);
      return;
    } else if (r >= 930 && r < 950) {
      // An iterator opened now and read many steps later sees the state of
      // now (no snapshot pins it): flushes, compactions and page drops in
      // between must leave everything it may read whole.
      if (held_.size() < 3 && rnd_->OneIn(2)) {
        Record("open-iterator(" + cf + ")");
        HeldIterator h{cf, RandomBounds(nullptr), nullptr, model_.families[cf]};
        h.it = db_->NewIterator(h.ro, Handle(cf));
        held_.push_back(std::move(h));
      } else if (!held_.empty()) {
        size_t i = rnd_->Uniform(held_.size());
        Record("read-held-iterator(" + held_[i].cf + ")");
        ASSERT_TRUE(CheckIterator(held_[i].it.get(), held_[i].ro, held_[i].expect, 100000)) << History();
        held_.erase(held_.begin() + static_cast<long>(i));
      }
      return;
    } else {
      return;
    }
    ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << History();
  }

  // Half of the copies are finished at once; the others after the database
  // has moved on, at the next checkpoint or reopen; some of their images are
  // written ahead of Finish.
  void DoCheckpoint() {
    FinishOpenCopy();
    std::string dir = "/ckpt" + std::to_string(step_);
    std::unique_ptr<PendingCheckpoint> copy;
    CheckpointOptions options;
    options.sync = set_.crashes || rnd_->OneIn(2);  // a crash may take an unsynced copy
    Status s = db_->BeginCheckpoint(dir, options, &copy);
    ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << History();
    if (rnd_->OneIn(2)) {
      open_copy_ = OpenCopy{std::move(copy), dir, model_};
      return;
    }
    WriteSomeImages(copy.get());
    s = copy->Finish();
    ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << History();
    CopyFinished(dir, model_);
  }

  // Writes about half of a copy's memtable images ahead of Finish, in a
  // random order (Finish writes the rest).
  void WriteSomeImages(PendingCheckpoint* copy) {
    std::vector<size_t> order(copy->ImageCount());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    for (size_t i = order.size(); i > 1; i--) std::swap(order[i - 1], order[rnd_->Uniform(i)]);
    for (size_t i : order) {
      if (rnd_->OneIn(2)) continue;
      Record("write-checkpoint-image(" + std::to_string(i) + ")");
      Status s = copy->WriteImage(i, nullptr);
      ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << History();
    }
  }

  void FinishOpenCopy() {
    if (open_copy_.copy == nullptr) return;
    Record("finish-checkpoint(" + open_copy_.dir + ")");
    WriteSomeImages(open_copy_.copy.get());
    Status s = open_copy_.copy->Finish();
    ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << History();
    OpenCopy done = std::move(open_copy_);
    open_copy_ = OpenCopy{};
    CopyFinished(done.dir, done.model);
  }

  void CopyFinished(const std::string& dir, const Model& model) {
    // Check the copy now, and again later after the source has moved on.
    pending_checkpoints_.emplace_back(dir, model);
    VerifyCheckpoint(pending_checkpoints_.back());
    if (pending_checkpoints_.size() > 2) {
      VerifyCheckpoint(pending_checkpoints_.front());
      ASSERT_TRUE(DestroyDB(pending_checkpoints_.front().first, options_).ok());
      pending_checkpoints_.pop_front();
    }
  }

  void VerifyCheckpoint(const std::pair<std::string, Model>& ckpt) {
    std::unique_ptr<DB> copy;
    Status s = DB::Open(options_, ckpt.first, &copy);
    ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << History();
    ASSERT_TRUE(CheckEverything(copy.get(), ckpt.second)) << "checkpoint " << ckpt.first << "\n" << History();
  }

  OptionSet set_;
  uint64_t seed_ = 0;
  std::unique_ptr<Random> rnd_;
  std::unique_ptr<MemEnv> env_;
  ManualClock clock_{1'000'000};
  Options options_;
  ColumnFamilyOptions cf_options_;
  WriteOptions write_options_;
  std::unique_ptr<DB> db_;
  std::unique_ptr<DB> neighbour_;  // on the same memory budget, if any
  // A checkpoint begun and not finished yet (destroyed before db_).
  struct OpenCopy {
    std::unique_ptr<PendingCheckpoint> copy;
    std::string dir;
    Model model;
  } open_copy_;
  Model model_;
  std::vector<std::pair<const Snapshot*, Model>> snapshots_;
  struct HeldIterator {
    std::string cf;
    ReadOptions ro;
    std::unique_ptr<Iterator> it;
    Family expect;
  };
  std::vector<HeldIterator> held_;  // opened, not read yet
  std::deque<std::pair<std::string, Model>> pending_checkpoints_;
  std::deque<std::string> history_;
  int64_t step_ = 0;
  // Over every open of the database so far (statistics start at each open).
  uint64_t flushes_ = 0, in_memory_compactions_ = 0, level0_compactions_ = 0, delete_driven_ = 0;

  // See OptionSet::compacts_in_memory.
  bool DeleteFree() const { return set_.compacts_in_memory && (step_ / 6000) % 2 == 1; }

  void CountFlushes() {
    const DbStatistics s = db_->GetStatistics();
    flushes_ += s.flushes;
    in_memory_compactions_ += s.in_memory_compactions;
    level0_compactions_ += s.compactions_level0;
    delete_driven_ += s.compactions_delete_driven;
  }

  // Time-ordered: merges happened (and, under FADE, delete-driven ones),
  // and every file is still in level 0.
  void CheckTimeOrdered() {
    EXPECT_GT(level0_compactions_, 0u);
    if (set_.delete_persistence_threshold_us > 0) {
      EXPECT_GT(delete_driven_, 0u);
    }
    for (const ColumnFamilyStatistics& cf : db_->GetStatistics().column_families) {
      for (size_t l = 1; l < cf.levels.size(); l++) {
        EXPECT_EQ(cf.levels[l].files, 0u) << cf.name << " level " << l;
      }
    }
  }
};

TEST_P(ModelTest, RandomOperationsMatchTheModel) {
  int64_t ops = EnvInt("LETHE_MODEL_OPS", 10000) * (set_.compacts_in_memory ? 3 : 1);
  for (int64_t i = 0; i < ops && !HasFatalFailure(); i++) Step();
  if (HasFatalFailure()) return;
  CountFlushes();
  if (set_.compacts_in_memory) {
    EXPECT_GT(in_memory_compactions_, 0u);
    EXPECT_GT(flushes_, in_memory_compactions_);  // files too
  }
  if (set_.compaction_style == CompactionStyle::kTimeOrdered) CheckTimeOrdered();
  ASSERT_TRUE(db_->CompactAll().ok());
  ASSERT_TRUE(CheckEverything(db_.get(), model_)) << History();
  if (set_.memory_budget > 0) {
    // The budget flushed memtables far below write_buffer_size, and the
    // neighbour still reads its own data.
    EXPECT_GT(db_->GetStatistics().flushes, 0u);
    EXPECT_GT(db_->GetStatistics().memory_table_reader_bytes, 0u);
    std::string v;
    ASSERT_TRUE(neighbour_->Get(ReadOptions(), neighbour_->DefaultColumnFamily(), "key7/1407", &v).ok());
    EXPECT_EQ(v, std::string(100, 'n'));
  }
  Reopen(false);
}

std::vector<uint64_t> Seeds() {
  int64_t one = EnvInt("LETHE_MODEL_SEED", -1);
  if (one >= 0) return {static_cast<uint64_t>(one)};
  std::vector<uint64_t> seeds;
  for (int64_t s = 1; s <= EnvInt("LETHE_MODEL_SEEDS", 4); s++) seeds.push_back(static_cast<uint64_t>(s));
  return seeds;
}

// 13 option sets (5 with FADE) x 4 seeds x 10,000 operations (30,000 for the two that compact in
// memory) = 680,000 operations per run.
INSTANTIATE_TEST_SUITE_P(OptionSetsAndSeeds, ModelTest,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kOptionSets))),
                                            ::testing::ValuesIn(Seeds())),
                         [](const ::testing::TestParamInfo<ModelTest::ParamType>& info) {
                           std::string name = kOptionSets[std::get<0>(info.param)].name;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name + "_seed" + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace lethe
