// DBImpl: checkpoints and the live-file listing.
#include <algorithm>
#include <map>

#include "db/db_impl.h"
#include "version/version_edit.h"
#include "wal/log_writer.h"
#include "util/kill_point.h"

namespace lethe {

// Whether a checkpoint may leave a file out: every entry in it lies under its
// family's horizon, so the copy's readers (the latest state, no snapshot) see
// none of it, nor, by the monotone delete-key contract, an older version it
// shadows. A range tombstone may still delete entries of deeper files, so a
// file holding one stays. (The database itself drops such a file soon, in the
// background; a snapshot taken before the horizon may hold it until then.)
static bool HiddenFromCopy(const FileMetaData& f, const SecondaryDeletes& records) {
  return f.num_range_tombstones == 0 && f.delete_key_max < records.horizon();
}

// Takes out of a snapshot edit the files no reader of the copy can see.
static void LeaveOutHiddenFiles(VersionEdit* snapshot) {
  std::map<uint32_t, const SecondaryDeletes*> records;
  for (const auto& [cf, r] : snapshot->secondary_deletes_) records[cf] = &r;
  auto& files = snapshot->new_files_;
  files.erase(std::remove_if(files.begin(), files.end(),
                             [&](const VersionEdit::NewFile& f) {
                               auto r = records.find(f.cf);
                               return r != records.end() && HiddenFromCopy(f.meta, *r->second);
                             }),
              files.end());
}

Status DBImpl::Checkpoint(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("checkpoint directory must not be empty");
  if (env_->FileExists(dir)) return Status::InvalidArgument(dir, "checkpoint directory exists");
  Status s = Flush();
  if (!s.ok()) return s;

  // Capture a consistent state; holding the version keeps its files alive.
  VersionEdit snapshot;
  VersionRef version;
  uint64_t manifest_number;
  {
    std::lock_guard<std::mutex> l(mu_);
    versions_->SetLastSequence(last_sequence_.load());
    versions_->EncodeSnapshot(&snapshot);
    LeaveOutHiddenFiles(&snapshot);
    version = versions_->current();
    manifest_number = versions_->manifest_number();
  }
  // The copy needs no WAL: its log number points past every log.
  snapshot.SetLogNumber(snapshot.next_file_number_.value(), /*names_wal=*/false);

  s = env_->CreateDirIfMissing(dir);
  if (!s.ok()) return s;
  auto cleanup = [&](Status err) {
    std::vector<std::string> children;
    if (env_->GetChildren(dir, &children).ok()) {
      for (const auto& c : children) env_->RemoveFile(dir + "/" + c);
    }
    env_->RemoveDir(dir);
    return err;
  };
  for (const VersionEdit::NewFile& f : snapshot.new_files_) {
    for (uint64_t number : {f.meta.number, f.meta.patch_file}) {
      if (number == 0) continue;
      std::string src = TableFileName(dbname_, number), dst = TableFileName(dir, number);
      s = env_->LinkFile(src, dst);
      if (s.IsNotSupported()) {
        std::string data;
        s = ReadFileToString(env_, src, &data);
        if (s.ok()) s = WriteStringToFile(env_, data, dst, /*sync=*/true);
      }
      if (!s.ok()) return cleanup(s);
      KillPoint("checkpoint.linked");
    }
  }
  std::unique_ptr<WritableFile> file;
  s = env_->NewWritableFile(ManifestFileName(dir, manifest_number), &file);
  if (!s.ok()) return cleanup(s);
  log::Writer writer(std::move(file), /*checksums=*/true);
  std::string record;
  snapshot.EncodeTo(&record);
  s = writer.AddRecord(record);
  if (s.ok()) s = writer.Sync();
  if (s.ok()) s = writer.Close();
  if (s.ok()) {
    std::string current = ManifestFileName("", manifest_number).substr(1) + "\n";
    s = WriteStringToFile(env_, current, CurrentFileName(dir), /*sync=*/true);
  }
  if (s.ok()) s = env_->SyncDir(dir);
  if (!s.ok()) return cleanup(s);
  return Status::OK();
}

Status DBImpl::GetLiveFiles(bool flush, std::vector<LiveFile>* files) {
  files->clear();
  if (flush) {
    Status s = Flush();
    if (!s.ok()) return s;
  }
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [id, cf] : versions_->current()->cfs) {
    for (int level = 0; level < kNumLevels; level++) {
      for (const FileRef& f : cf->levels[level]) {
        files->push_back(LiveFile{TableFileName("", f->number).substr(1), f->file_size, true});
        if (f->patch_file != 0) {
          files->push_back(LiveFile{TableFileName("", f->patch_file).substr(1), f->patch_size, true});
        }
      }
    }
  }
  std::string manifest = ManifestFileName("", versions_->manifest_number()).substr(1);
  uint64_t size = 0;
  env_->GetFileSize(dbname_ + "/" + manifest, &size);
  files->push_back(LiveFile{manifest, size, false});
  env_->GetFileSize(CurrentFileName(dbname_), &size);
  files->push_back(LiveFile{"CURRENT", size, false});
  return Status::OK();
}

}  // namespace lethe
