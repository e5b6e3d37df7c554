// Corruption: a byte flipped or the file cut short anywhere in a table file,
// the WAL, the manifest or CURRENT. Every case must end in a Corruption
// error (at open or at the read that meets the damage) or in exactly the
// right data; never a crash or silently wrong data. The one documented
// repair: damage in the last record of the newest WAL reads as a write torn
// by a crash, and that record is dropped. A manifest cut short also reads
// like a crash during its last append; recovery tells the two apart by the
// WAL the manifest names and the WAL's edit markers, and fails with
// Corruption (docs/architecture.md, "Recovery and crashes").
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lethe/db.h"
#include "lethe/env.h"
#include "db/write_batch_internal.h"
#include "util/random.h"
#include "version/version_set.h"

namespace lethe {
namespace {

constexpr int kWalRecords = 30;

std::string WalKey(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "w%03d", i);
  return buf;
}

class CorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = NewMemEnv();
    options_.env = env_.get();
    options_.background_compactions = false;  // the files stay as built
    options_.write_buffer_size = 1 << 20;
    options_.cf_defaults.page_size = 256;
    options_.cf_defaults.pages_per_tile = 4;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options_, "/db", &db).ok());
    ColumnFamilyHandle* cf = db->DefaultColumnFamily();
    Random rnd(301);
    // Two levels of tables with range tombstones, point tombstones and a
    // dropped-page record; then WAL records that no flush covers.
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < 1500; i++) {
        std::string k = "k" + std::to_string(rnd.Uniform(2000)), v(10 + rnd.Uniform(60), 'a' + round);
        ASSERT_TRUE(db->Put(WriteOptions(), cf, k, v, static_cast<uint64_t>(round * 2000 + i)).ok());
        want_[k] = v;
        delete_key_[k] = static_cast<uint64_t>(round * 2000 + i);
      }
      for (int i = 0; i < 100; i++) {
        std::string k = "k" + std::to_string(rnd.Uniform(2000));
        ASSERT_TRUE(db->Delete(WriteOptions(), cf, k).ok());
        want_.erase(k);
      }
      ASSERT_TRUE(db->DeleteRange(WriteOptions(), cf, "k15", "k16").ok());
      want_.erase(want_.lower_bound("k15"), want_.lower_bound("k16"));
      ASSERT_TRUE(round == 0 ? db->CompactAll().ok() : db->Flush().ok());
    }
    // Secondary deletes live in the manifest alone: a horizon (delete keys
    // below 50, from round 0) and a delete-key range (2100-2199, round 1).
    ASSERT_TRUE(db->AdvanceHorizon(cf, 50).ok());
    ASSERT_TRUE(db->DeleteByDeleteKey(cf, 2100, 2199).ok());
    ASSERT_TRUE(db->WaitForBackgroundWork().ok());  // the page drops, before the WAL records
    std::erase_if(want_, [this](const auto& kv) {
      const uint64_t dk = delete_key_.at(kv.first);
      return dk < 50 || (dk >= 2100 && dk <= 2199);
    });
    for (int i = 0; i < kWalRecords; i++) {
      ASSERT_TRUE(db->Put(WriteOptions(), cf, WalKey(i), "wal" + std::to_string(i)).ok());
      want_[WalKey(i)] = "wal" + std::to_string(i);
    }
    db.reset();
    std::vector<std::string> children;
    ASSERT_TRUE(env_->GetChildren("/db", &children).ok());
    for (const std::string& c : children) {
      if (c == "LOCK") continue;
      ASSERT_TRUE(env_->ReadFileToString("/db/" + c, &pristine_[c]).ok());
    }
    uint64_t n;
    bool have_log = false, have_table = false, have_manifest = false;
    for (const auto& [name, data] : pristine_) {
      FileType t = ParseFileName(name, &n);
      if (t == FileType::kLog && !data.empty()) {
        have_log = true;
        newest_log_ = std::max(newest_log_, name);
      }
      have_table |= t == FileType::kTable;
      have_manifest |= t == FileType::kManifest;
    }
    ASSERT_TRUE(have_log && have_table && have_manifest);
  }

  // Back to the files as built: an open rewrites some (recovery flushes the
  // WAL, rolls the manifest, removes what is obsolete).
  void Restore() {
    std::vector<std::string> children;
    ASSERT_TRUE(env_->GetChildren("/db", &children).ok());
    for (const std::string& c : children) {
      if (c != "LOCK" && pristine_.count(c) == 0) {
        ASSERT_TRUE(env_->RemoveFile("/db/" + c).ok());
      }
    }
    for (const auto& [name, data] : pristine_) ASSERT_TRUE(env_->WriteStringToFile("/db/" + name, data).ok());
  }

  // Opens and reads everything. Returns "" if the outcome is allowed, else
  // what went wrong. `torn_from`: the WAL record from which a drop is allowed
  // (kWalRecords: none).
  std::string Check(const std::string& what, int torn_from) {
    std::unique_ptr<DB> db;
    Status s = DB::Open(options_, "/db", &db);
    if (!s.ok()) {
      cases_detected_++;
      if (s.ToString().find("lost durable edits") != std::string::npos) cases_lost_edits_++;
      return s.IsCorruption() ? "" : what + ": open failed with " + s.ToString() + ", not Corruption";
    }
    std::map<std::string, std::string> got;
    auto it = db->NewIterator(ReadOptions(), db->DefaultColumnFamily());
    for (it->SeekToFirst(); it->Valid(); it->Next()) got[std::string(it->key())] = std::string(it->value());
    if (!it->status().ok()) {
      cases_detected_++;
      return it->status().IsCorruption() ? "" : what + ": scan failed with " + it->status().ToString();
    }
    // Point reads take another path (fence pointers, Bloom filters).
    for (const auto& [k, v] : want_) {
      std::string value;
      Status g = db->Get(ReadOptions(), db->DefaultColumnFamily(), k, &value);
      if (g.IsCorruption()) {
        cases_detected_++;
        return "";
      }
      if (g.IsNotFound() && got.count(k) == 0) continue;  // judged below with the scan
      if (!g.ok()) return what + ": get " + k + " failed with " + g.ToString();
      if (got.count(k) == 0 || got[k] != value) return what + ": get " + k + " disagrees with the scan";
    }
    // Without an error, the data must be right: all of it, or all but a
    // suffix of the WAL's records where the damage allows a torn write.
    std::map<std::string, std::string> want = want_;
    int dropped = 0;
    for (int i = kWalRecords - 1; i >= torn_from; i--) {
      if (got.count(WalKey(i)) == 0) {
        want.erase(WalKey(i));
        dropped++;
      } else {
        break;
      }
    }
    if (got != want) {
      int lost = 0, wrong = 0, extra = 0;
      for (const auto& [k, v] : want) {
        if (!got.count(k)) lost++;
        else if (got[k] != v) wrong++;
      }
      for (const auto& [k, v] : got) extra += want.count(k) == 0;
      return what + ": silently wrong data (" + std::to_string(lost) + " lost, " + std::to_string(wrong) +
             " wrong, " + std::to_string(extra) + " extra)";
    }
    if (dropped > 0) cases_repaired_++;
    else cases_harmless_++;
    return "";
  }

  // The write batch holding byte `pos` of the newest log (walking the
  // record headers: masked CRC, then the payload length, fixed32 each). A
  // position in a manifest edit marker counts as the next batch.
  int WalRecordAt(uint64_t pos) const {
    const std::string& log = pristine_.at(newest_log_);
    uint64_t offset = 0;
    for (int r = 0;;) {
      const auto* p = reinterpret_cast<const unsigned char*>(log.data() + offset + 4);
      const uint64_t length = p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint64_t>(p[3]) << 24;
      uint64_t edit;
      bool ok;
      const bool marker = DecodeManifestEditMarker(std::string_view(log).substr(offset + 8, length), &edit, &ok);
      offset += 8 + length;
      if (pos < offset || offset >= log.size()) return r;
      if (!marker) r++;
    }
  }

  // Positions to damage in a file of `size` bytes: the first and last bytes
  // and an even spread between.
  static std::vector<uint64_t> Positions(uint64_t size, int spread) {
    std::vector<uint64_t> p;
    for (uint64_t i = 0; i < std::min<uint64_t>(size, 16); i++) p.push_back(i);
    for (int i = 1; i < spread; i++) p.push_back(size * static_cast<uint64_t>(i) / static_cast<uint64_t>(spread));
    for (uint64_t i = 1; i <= std::min<uint64_t>(size, 16); i++) p.push_back(size - i);
    return p;
  }

  void RunAll(bool truncate) {
    int cases = 0;
    std::vector<std::string> failures;
    for (const auto& [name, data] : pristine_) {
      uint64_t n;
      const FileType type = ParseFileName(name, &n);
      for (uint64_t pos : Positions(data.size(), type == FileType::kTable ? 150 : 60)) {
        Restore();
        std::string damaged = data;
        if (truncate) damaged.resize(pos);
        else damaged[pos] = static_cast<char>(damaged[pos] ^ 0x41);
        ASSERT_TRUE(env_->WriteStringToFile("/db/" + name, damaged).ok());
        int torn_from = kWalRecords;
        if (name == newest_log_) {
          // Cut short: the records from the cut on are a torn write. A flip:
          // only in the last record (nothing valid follows it).
          int r = WalRecordAt(pos);
          if (truncate) torn_from = r;
          else if (r == kWalRecords - 1) torn_from = r;
        }
        std::string what = name + (truncate ? " cut at " : " flipped at ") + std::to_string(pos);
        std::string err = Check(what, torn_from);
        cases++;
        if (!err.empty()) failures.push_back(err);
      }
    }
    std::printf("[ corrupt  ] %d %s: %d detected (Corruption; %d as a manifest that lost durable edits), "
                "%d repaired (torn WAL tail dropped), %d harmless (right data)\n",
                cases, truncate ? "truncations" : "byte flips", cases_detected_, cases_lost_edits_, cases_repaired_,
                cases_harmless_);
    for (size_t i = 0; i < failures.size() && i < 25; i++) ADD_FAILURE() << failures[i];
    EXPECT_TRUE(failures.empty()) << failures.size() << " of " << cases << " cases went wrong";
  }

  std::unique_ptr<MemEnv> env_;
  Options options_;
  std::map<std::string, std::string> want_;
  std::map<std::string, uint64_t> delete_key_;  // of each key's newest value
  std::map<std::string, std::string> pristine_;
  std::string newest_log_;
  int cases_detected_ = 0, cases_lost_edits_ = 0, cases_repaired_ = 0, cases_harmless_ = 0;
};

TEST_F(CorruptionTest, AFlippedByteAnywhereIsDetectedOrHarmless) { RunAll(/*truncate=*/false); }

TEST_F(CorruptionTest, AFileCutShortAnywhereIsDetectedOrATornWalTail) { RunAll(/*truncate=*/true); }

// A manifest cut 3 bytes into the edit after `keep` bytes, as a crash during
// that append would leave it, but after the edit was acknowledged. (A crash
// during an append, where the same cut is sound, is the crash torture's
// kill point manifest.appended.)
class LostManifestEditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = NewMemEnv();
    options_.env = env_.get();
    options_.background_compactions = false;
    ASSERT_TRUE(DB::Open(options_, "/db", &db_).ok());
    cf_ = db_->DefaultColumnFamily();
  }
  uint64_t ManifestSize() {
    std::string current;
    EXPECT_TRUE(env_->ReadFileToString("/db/CURRENT", &current).ok());
    manifest_ = "/db/" + current.substr(0, current.size() - 1);
    uint64_t size = 0;
    EXPECT_TRUE(env_->GetFileSize(manifest_, &size).ok());
    return size;
  }
  void CutManifest(uint64_t keep) {
    std::string data;
    ASSERT_TRUE(env_->ReadFileToString(manifest_, &data).ok());
    ASSERT_GT(data.size(), keep + 3);
    ASSERT_TRUE(env_->WriteStringToFile(manifest_, data.substr(0, keep + 3)).ok());
  }
  Status Reopen() {
    db_.reset();
    return DB::Open(options_, "/db", &db_);
  }

  std::unique_ptr<MemEnv> env_;
  Options options_;
  std::unique_ptr<DB> db_;
  ColumnFamilyHandle* cf_ = nullptr;
  std::string manifest_;
};

TEST_F(LostManifestEditTest, ALostFlushIsCorruptionNamingTheMissingWal) {
  for (int i = 0; i < 100; i++) ASSERT_TRUE(db_->Put(WriteOptions(), cf_, WalKey(i), "v").ok());
  ASSERT_TRUE(db_->Flush().ok());  // numbers the new WAL in the manifest
  const uint64_t before = ManifestSize();
  ASSERT_TRUE(db_->Put(WriteOptions(), cf_, "x", "v").ok());
  ASSERT_TRUE(db_->Flush().ok());  // its edit retires the WAL holding "x"
  CutManifest(before);
  Status s = Reopen();
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(".log"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("missing"), std::string::npos) << s.ToString();
}

TEST_F(LostManifestEditTest, ALostSecondaryDeleteIsCorruptionFromTheWalMarker) {
  ASSERT_TRUE(db_->Put(WriteOptions(), cf_, "old", "v", 10).ok());  // in the WAL: no table to drop
  const uint64_t before = ManifestSize();
  ASSERT_TRUE(db_->AdvanceHorizon(cf_, 100).ok());  // hides "old"; lives in the manifest alone
  ASSERT_TRUE(db_->Put(WriteOptions(), cf_, "new", "v", 200).ok());
  CutManifest(before);
  Status s = Reopen();
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("manifest lost durable edits"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace lethe
