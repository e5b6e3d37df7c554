#include "version/version_set.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "lethe/db.h"
#include "wal/log_reader.h"
#include "util/kill_point.h"

namespace lethe {

std::string ManifestFileName(const std::string& dbname, uint64_t number) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "/MANIFEST-%06" PRIu64, number);
  return dbname + buf;
}
std::string LogFileName(const std::string& dbname, uint64_t number) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "/%06" PRIu64 ".log", number);
  return dbname + buf;
}
std::string CurrentFileName(const std::string& dbname) { return dbname + "/CURRENT"; }
std::string LockFileName(const std::string& dbname) { return dbname + "/LOCK"; }

FileType ParseFileName(const std::string& name, uint64_t* number) {
  if (name == "CURRENT") return FileType::kCurrent;
  if (name == "LOCK") return FileType::kLock;
  auto parse_num = [&](std::string_view digits) {
    if (digits.empty() || digits.size() > 19) return false;
    uint64_t n = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    *number = n;
    return true;
  };
  std::string_view n(name);
  if (n.starts_with("MANIFEST-")) {
    return parse_num(n.substr(9)) ? FileType::kManifest : FileType::kUnknown;
  }
  if (n.ends_with(".tmp")) return FileType::kTemp;
  size_t dot = n.find('.');
  if (dot == std::string_view::npos || !parse_num(n.substr(0, dot))) return FileType::kUnknown;
  std::string_view suffix = n.substr(dot);
  if (suffix == ".sst") return FileType::kTable;
  if (suffix == ".log") return FileType::kLog;
  return FileType::kUnknown;
}

static Status SetCurrentFile(Env* env, const std::string& dbname, uint64_t manifest_number) {
  std::string contents = ManifestFileName("", manifest_number).substr(1) + "\n";
  std::string tmp = dbname + "/CURRENT.tmp";
  Status s = WriteStringToFile(env, contents, tmp, /*sync=*/true);
  if (s.ok()) KillPoint("current.tmp_written");
  if (s.ok()) s = env->RenameFile(tmp, CurrentFileName(dbname));
  if (s.ok()) KillPoint("current.renamed");
  if (s.ok()) s = env->SyncDir(dbname);
  if (!s.ok()) env->RemoveFile(tmp);
  return s;
}

void VersionSet::Install(std::shared_ptr<const Version> v) {
  ForgetExpired();
  const uint64_t now = clock_->NowMicros();
  for (Installed& i : versions_) {
    if (i.replaced_us == 0) i.replaced_us = now;
  }
  versions_.push_back(Installed{v, 0});
  current_ = std::move(v);
}

void VersionSet::EncodeSnapshot(VersionEdit* edit) const {
  edit->SetLogNumber(log_number_, log_names_wal_);
  edit->SetEditNumber(edit_number_);
  edit->SetNextFileNumber(next_file_number_);
  edit->SetLastSequence(last_sequence_);
  edit->SetMaxColumnFamily(max_column_family_);
  for (const auto& [id, files] : current_->cfs) {
    edit->AddColumnFamily(files->descriptor);
    if (!files->secondary.empty()) edit->SetSecondaryDeletes(id, files->secondary);
    for (int l = 0; l < kNumLevels; l++) {
      for (const FileRef& f : files->levels[l]) edit->AddFile(id, l, *f);
    }
  }
}

Status VersionSet::WriteManifest(uint64_t number, const VersionEdit& snapshot) {
  std::string fname = ManifestFileName(dbname_, number);
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(fname, &file);
  if (!s.ok()) return s;
  auto writer = std::make_unique<log::Writer>(std::move(file), /*checksums=*/true);
  std::string record;
  snapshot.EncodeTo(&record);
  s = writer->AddRecord(record);
  if (s.ok()) s = writer->Sync();
  // The manifest's name must be durable before CURRENT names it: else a power
  // loss may keep the new CURRENT and lose the file it points at.
  if (s.ok()) s = env_->SyncDir(dbname_);
  if (s.ok()) KillPoint("manifest.new_written");
  if (s.ok()) s = SetCurrentFile(env_, dbname_, number);
  if (!s.ok()) {
    writer->Close();
    env_->RemoveFile(fname);
    return s;
  }
  if (manifest_) manifest_->Close();
  uint64_t old = manifest_number_;
  manifest_ = std::move(writer);
  manifest_number_ = number;
  if (old != 0 && old != number) env_->RemoveFile(ManifestFileName(dbname_, old));
  return Status::OK();
}

Status VersionSet::CreateNew(const ColumnFamilyOptions& default_cf_options) {
  VersionEdit edit;
  edit.AddColumnFamily(ColumnFamilyDescriptor{DB::kDefaultColumnFamilyId,
                                              DB::kDefaultColumnFamilyName, default_cf_options});
  std::shared_ptr<Version> v;
  Status s = current_->Apply(edit, &v);
  if (!s.ok()) return s;
  Install(std::move(v));
  return RollManifest();
}

Status VersionSet::RollManifest() {
  uint64_t number = NewFileNumber();
  VersionEdit snapshot;
  EncodeSnapshot(&snapshot);
  return WriteManifest(number, snapshot);
}

Status VersionSet::Recover() {
  std::string current;
  Status s = ReadFileToString(env_, CurrentFileName(dbname_), &current);
  if (!s.ok()) return s;
  if (current.empty() || current.back() != '\n') {
    return Status::Corruption(CurrentFileName(dbname_), "CURRENT is not terminated by a newline");
  }
  current.pop_back();
  uint64_t number;
  if (ParseFileName(current, &number) != FileType::kManifest) {
    return Status::Corruption(CurrentFileName(dbname_), "CURRENT does not name a manifest");
  }
  std::string fname = dbname_ + "/" + current;
  std::unique_ptr<SequentialFile> file;
  s = env_->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;
  log::Reader reader(std::move(file), /*verify_checksums=*/true);
  std::string scratch;
  std::string_view record;
  std::shared_ptr<const Version> v = std::make_shared<Version>();
  bool have_next = false, have_seq = false;
  int edits = 0;
  while (reader.ReadRecord(&record, &scratch)) {
    VersionEdit edit;
    s = edit.DecodeFrom(record);
    if (!s.ok()) return Status::Corruption(fname, s.message());
    std::shared_ptr<Version> next;
    s = v->Apply(edit, &next);
    if (!s.ok()) return Status::Corruption(fname, s.message());
    v = std::move(next);
    if (edit.log_number_) {
      log_number_ = *edit.log_number_;
      log_names_wal_ = edit.log_names_wal_;
    }
    if (edit.edit_number_) edit_number_ = *edit.edit_number_;
    if (edit.next_file_number_) {
      next_file_number_ = *edit.next_file_number_;
      have_next = true;
    }
    if (edit.last_sequence_) {
      last_sequence_ = *edit.last_sequence_;
      have_seq = true;
    }
    if (edit.max_column_family_) max_column_family_ = std::max(max_column_family_, *edit.max_column_family_);
    for (const auto& cf : edit.added_cfs_) max_column_family_ = std::max(max_column_family_, cf.id);
    for (const auto& n : edit.new_files_) MarkFileNumberUsed(n.meta.number);
    edits++;
  }
  if (!reader.status().ok()) return reader.status();
  if (reader.damaged_before_end() || reader.whole_record_failed()) {
    return Status::Corruption(fname, "damaged record at offset " + std::to_string(reader.offset()) +
                                         (reader.damaged_before_end() ? " is followed by more records"
                                                                      : " fails its checksum"));
  }
  if (edits == 0 || !have_next || !have_seq) {
    return Status::Corruption(fname, "manifest holds no complete snapshot");
  }
  // The default family is created with the database and cannot be dropped;
  // the engine looks it up unchecked (DB::DefaultColumnFamily).
  if (v->Find(DB::kDefaultColumnFamilyId) == nullptr) {
    return Status::Corruption(fname, "manifest has no default column family");
  }
  MarkFileNumberUsed(number);
  Install(std::move(v));
  return Status::OK();
}

Status VersionSet::LogAndApply(VersionEdit* edit) {
  // After a failed append the manifest may end in a partial record; nothing
  // may follow it, or recovery would see damage before the end.
  if (!manifest_error_.ok()) return manifest_error_;
  std::shared_ptr<Version> v;
  Status s = current_->Apply(*edit, &v);
  if (!s.ok()) return s;
  edit->SetNextFileNumber(next_file_number_);
  edit->SetLastSequence(last_sequence_);
  uint64_t log_number = log_number_;
  bool names_wal = log_names_wal_;
  if (edit->log_number_.value_or(0) > log_number) {
    log_number = *edit->log_number_;
    names_wal = edit->log_names_wal_;
  }
  edit->SetLogNumber(log_number, names_wal);
  edit->SetEditNumber(edit_number_ + 1);
  edit->SetMaxColumnFamily(max_column_family_);
  std::string record;
  edit->EncodeTo(&record);
  s = manifest_->AddRecord(record);
  if (s.ok()) KillPoint("manifest.appended");
  if (s.ok()) s = manifest_->Sync();
  if (s.ok()) KillPoint("manifest.synced");
  if (!s.ok()) {
    manifest_error_ = s;
    return s;
  }
  log_number_ = log_number;
  log_names_wal_ = names_wal;
  edit_number_++;
  Install(std::move(v));
  return Status::OK();
}

// Calls fn for each file record of v until it returns true; returns whether one did.
template <typename Fn>
static bool AnyFileRecord(const Version& v, Fn&& fn) {
  for (const auto& [id, files] : v.cfs) {
    for (int l = 0; l < kNumLevels; l++) {
      for (const FileRef& f : files->levels[l]) {
        if (fn(*f)) return true;
      }
    }
  }
  return false;
}

// Adds f's table file and its patch table, if any, to numbers.
static void AddFileNumbers(const FileMetaData& f, std::set<uint64_t>* numbers) {
  numbers->insert(f.number);
  if (f.patch_file != 0) numbers->insert(f.patch_file);
}

void VersionSet::ForgetExpired() {
  versions_.remove_if([](const Installed& i) { return i.version.expired(); });
}

bool VersionSet::AnyLiveFileRecord(const std::function<bool(const FileMetaData&)>& fn) {
  ForgetExpired();
  for (const Installed& i : versions_) {
    VersionRef v = i.version.lock();
    if (v && AnyFileRecord(*v, fn)) return true;
  }
  return false;
}

VersionSet::HeldVersions VersionSet::GetHeldVersions() {
  ForgetExpired();
  std::set<uint64_t> current;  // table files, patch tables included
  AnyFileRecord(*current_, [&current](const FileMetaData& f) {
    AddFileNumbers(f, &current);
    return false;
  });
  HeldVersions held;
  std::set<uint64_t> counted;
  auto count_obsolete = [&](uint64_t number, uint64_t bytes) {
    if (number != 0 && !current.count(number) && counted.insert(number).second) held.obsolete_file_bytes += bytes;
  };
  const uint64_t now = clock_->NowMicros();
  for (const Installed& i : versions_) {
    VersionRef v = i.version.lock();
    if (!v || v == current_) continue;
    held.count++;
    held.oldest_age_us = std::max(held.oldest_age_us, now > i.replaced_us ? now - i.replaced_us : 1);
    AnyFileRecord(*v, [&](const FileMetaData& f) {
      count_obsolete(f.number, f.file_size);
      count_obsolete(f.patch_file, f.patch_size);
      return false;
    });
  }
  return held;
}

void VersionSet::AddLiveFiles(std::set<uint64_t>* live) {
  AnyLiveFileRecord([live](const FileMetaData& f) {
    AddFileNumbers(f, live);
    return false;
  });
}

bool VersionSet::AnyLiveRecordReads(uint64_t number, const std::vector<uint32_t>& pages) {
  return AnyLiveFileRecord([&](const FileMetaData& f) {
    return f.number == number &&
           std::any_of(pages.begin(), pages.end(), [&f](uint32_t page) { return f.ReadsPageFromFile(page); });
  });
}

}  // namespace lethe
