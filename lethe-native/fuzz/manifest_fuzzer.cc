// Fuzz target: the manifest, from one version edit up to opening a database.
//
// The input is a sequence of version edits, split by FuzzedDataProvider's
// ConsumeRandomLengthString (a backslash followed by another byte ends an
// edit; "\\" is one backslash). Each edit, and the whole input, is decoded
// with VersionEdit::DecodeFrom; what decodes must re-encode to a fixed point
// (encode(decode(encode(e))) == encode(e)) and have ascending page lists.
// Then the edits become the
// records of a MANIFEST (framed with correct checksums, so mutations reach
// the edit decoder and Version::Apply rather than the CRC check), CURRENT
// points at it, and DB::Open runs against a small database whose table
// files, patch table and WAL are real (built once, in LLVMFuzzerInitialize):
// the manifest's file records, column family options, page lists and
// secondary deletes meet actual files. An open database is read (lookups,
// scans of every column family) and compacted. Every outcome must be a
// Status: no crash, hang, huge allocation or sanitizer report.
// Seeds (the template database's own manifests, whole and cut into single
// edits): `manifest_fuzzer --write_seeds=DIR`.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <map>

#include "fuzz_util.h"
#include "lethe/db.h"
#include "lethe/env.h"
#include "version/version_edit.h"
#include "version/version_set.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace lethe {
namespace {

constexpr const char* kDb = "/db";

// The database every input is opened against: its files other than the
// manifest, the manifest's records, and keys worth looking up.
struct Template {
  std::map<std::string, std::string> files;  // name -> contents, without MANIFEST and CURRENT
  std::string manifest_name;
  std::vector<std::string> manifest_records;
  std::vector<std::string> history;  // the manifest before the last reopen
  std::vector<std::string> keys;
};

Options FuzzOptions(Env* env, Clock* clock) {
  Options o;
  o.env = env;
  o.clock = clock;
  o.background_compactions = false;  // deterministic: work happens in the calls below
  o.create_if_missing = false;
  o.page_cache_bytes = 1 << 20;
  o.write_buffer_size = 64 * 1024;
  return o;
}

std::string CurrentManifest(Env* env) {
  std::string current;
  FUZZ_CHECK(ReadFileToString(env, CurrentFileName(kDb), &current).ok());
  return current.substr(0, current.size() - 1);
}

std::vector<std::string> ManifestRecords(Env* env) {
  std::unique_ptr<SequentialFile> file;
  FUZZ_CHECK(env->NewSequentialFile(std::string(kDb) + "/" + CurrentManifest(env), &file).ok());
  log::Reader reader(std::move(file), true);
  std::vector<std::string> records;
  std::string scratch;
  std::string_view record;
  while (reader.ReadRecord(&record, &scratch)) records.emplace_back(record);
  return records;
}

// A database with levelled tables of 4-page delete tiles, dropped and patched
// pages, secondary-delete records, a second column family with a level-0
// file, and writes still in the WAL.
Template MakeTemplate() {
  Template t;
  auto env = NewMemEnv();
  ManualClock clock(1'000'000);
  Options options = FuzzOptions(env.get(), &clock);
  options.create_if_missing = true;
  options.cf_defaults.page_size = 96;
  options.cf_defaults.pages_per_tile = 4;
  options.cf_defaults.delete_persistence_threshold_us = 60'000'000;
  std::unique_ptr<DB> db;
  FUZZ_CHECK(DB::Open(options, kDb, &db).ok());
  ColumnFamilyHandle* cf0 = db->DefaultColumnFamily();
  const uint64_t dks[] = {40, 10, 30, 20, 50, 5, 25, 15};
  for (int i = 0; i < 32; i++) {
    std::string key = "k" + std::to_string(10 + i);
    FUZZ_CHECK(db->Put(WriteOptions(), cf0, key, "v" + std::to_string(i), dks[(i * 5) % 8]).ok());
    if (i % 8 == 0) t.keys.push_back(key);
  }
  FUZZ_CHECK(db->CompactAll().ok());
  FUZZ_CHECK(db->AdvanceHorizon(cf0, 21).ok());
  FUZZ_CHECK(db->WaitForBackgroundWork().ok());
  FUZZ_CHECK(db->DeleteByDeleteKey(cf0, 25, 50).ok());
  FUZZ_CHECK(db->WaitForBackgroundWork().ok());
  ColumnFamilyOptions two;
  two.page_size = 128;
  ColumnFamilyHandle* cf2;
  FUZZ_CHECK(db->CreateColumnFamily("two", two, &cf2).ok());
  FUZZ_CHECK(db->Merge(WriteOptions(), cf2, "m", "a", 7).ok());
  FUZZ_CHECK(db->DeleteRange(WriteOptions(), cf2, "b", "d").ok());
  FUZZ_CHECK(db->Flush().ok());
  FUZZ_CHECK(db->Put(WriteOptions(), cf0, "k11", "flushed at reopen").ok());
  t.history = ManifestRecords(env.get());
  // Reopened: the manifest starts with a full snapshot of all the above.
  db.reset();
  FUZZ_CHECK(DB::Open(options, kDb, &db).ok());
  FUZZ_CHECK(db->Put(WriteOptions(), db->DefaultColumnFamily(), "wal-only", "x").ok());  // stays in the WAL
  FUZZ_CHECK(db->Merge(WriteOptions(), db->GetColumnFamily("two"), "m", "b", 8).ok());
  t.keys.push_back("m");
  t.keys.push_back("wal-only");
  db.reset();

  std::vector<std::string> children;
  FUZZ_CHECK(env->GetChildren(kDb, &children).ok());
  for (const std::string& c : children) {
    uint64_t number;
    FileType type = ParseFileName(c, &number);
    if (type != FileType::kTable && type != FileType::kLog) continue;
    FUZZ_CHECK(env->ReadFileToString(std::string(kDb) + "/" + c, &t.files[c]).ok());
  }
  t.manifest_name = CurrentManifest(env.get());
  t.manifest_records = ManifestRecords(env.get());
  FUZZ_CHECK(t.manifest_records.size() > 1);
  return t;
}

const Template& GetTemplate() {
  static const Template t = MakeTemplate();
  return t;
}

// Decodes an edit; what decodes must re-encode to a fixed point, and page
// lists must ascend (readers binary-search them).
void DecodeAndRoundTrip(std::string_view record) {
  VersionEdit edit;
  if (!edit.DecodeFrom(record).ok()) return;
  for (const VersionEdit::NewFile& f : edit.new_files_) {
    for (const auto* list : {&f.meta.dropped_pages, &f.meta.patched_pages}) {
      FUZZ_CHECK(std::is_sorted(list->begin(), list->end()));
    }
  }
  std::string once, twice;
  edit.EncodeTo(&once);
  VersionEdit again;
  FUZZ_CHECK(again.DecodeFrom(once).ok());
  again.EncodeTo(&twice);
  FUZZ_CHECK(once == twice);
}

// Reads every column family of an open database, then compacts it.
void Exercise(DB* db, const Template& t) {
  FUZZ_CHECK(db->DefaultColumnFamily() != nullptr);
  for (ColumnFamilyHandle* cf : db->ListColumnFamilies()) {
    for (const std::string& k : t.keys) {
      std::string value;
      (void)db->Get(ReadOptions(), cf, k, &value);
    }
    auto it = db->NewIterator(ReadOptions(), cf);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
    (void)it->status();
  }
  (void)db->CompactAll();
}

void OpenManifest(const std::vector<std::string>& records) {
  const Template& t = GetTemplate();
  auto env = NewMemEnv();
  FUZZ_CHECK(env->CreateDirIfMissing(kDb).ok());
  for (const auto& [name, contents] : t.files) {
    FUZZ_CHECK(env->WriteStringToFile(std::string(kDb) + "/" + name, contents).ok());
  }
  std::unique_ptr<WritableFile> file;
  FUZZ_CHECK(env->NewWritableFile(std::string(kDb) + "/" + t.manifest_name, &file).ok());
  log::Writer writer(std::move(file), /*checksums=*/true);
  for (const std::string& r : records) FUZZ_CHECK(writer.AddRecord(r).ok());
  FUZZ_CHECK(writer.Close().ok());
  FUZZ_CHECK(env->WriteStringToFile(CurrentFileName(kDb), t.manifest_name + "\n").ok());

  ManualClock clock(2'000'000);
  std::unique_ptr<DB> db;
  if (DB::Open(FuzzOptions(env.get(), &clock), kDb, &db).ok()) Exercise(db.get(), t);
}

std::vector<std::string> MakeSeeds() {
  const Template& t = GetTemplate();
  std::vector<std::string> seeds{fuzz::JoinRecords(t.manifest_records), fuzz::JoinRecords(t.history)};
  for (const std::string& r : t.manifest_records) seeds.push_back(fuzz::JoinRecords({r}));
  return seeds;
}

}  // namespace
}  // namespace lethe

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  lethe::fuzz::MaybeWriteSeeds(*argc, *argv, lethe::MakeSeeds);
  lethe::GetTemplate();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lethe::DecodeAndRoundTrip(std::string_view(reinterpret_cast<const char*>(data), size));
  FuzzedDataProvider in(data, size);
  std::vector<std::string> records;
  while (in.remaining_bytes() > 0 && records.size() < 16) {
    records.push_back(in.ConsumeRandomLengthString());
    lethe::DecodeAndRoundTrip(records.back());
  }
  lethe::OpenManifest(records);
  return 0;
}
