// DBImpl: checkpoints (a copy of the files and memtables) and the live-file listing.
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "compaction/compaction_stream.h"
#include "compaction/table_writer.h"
#include "db/db_impl.h"
#include "db/table_output_rules.h"
#include "iterator/merging_iterator.h"
#include "iterator/visible_versions_iterator.h"
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

// The memtables of one family as a checkpoint took them, newest first.
// `flushed`: the database's flush writes them to files, which the copy links.
struct MemtableImage {
  uint32_t cf = 0;
  bool flushed = false;
  ColumnFamilyOptions options;
  std::vector<std::shared_ptr<MemTable>> memtables;
  std::shared_ptr<const ColumnFamilyFiles> files;
  uint64_t oldest_tombstone_time_us = 0;
};

// Removes a copy's directory and what is in it.
static void RemoveCopy(Env* env, const std::string& dir) {
  std::vector<std::string> children;
  if (env->GetChildren(dir, &children).ok()) {
    for (const auto& c : children) env->RemoveFile(dir + "/" + c);
  }
  env->RemoveDir(dir);
}

class DBImpl::CheckpointCopy final : public PendingCheckpoint {
 public:
  CheckpointCopy(DBImpl* db, std::string dir, const CheckpointOptions& options)
      : db_(db), dir_(std::move(dir)), options_(options), open_(&db->open_checkpoints_) {}
  ~CheckpointCopy() override {
    {
      std::lock_guard<std::mutex> l(db_->mu_);
      std::erase(db_->copies_awaiting_flush_, this);
      db_->NoteFlushAwaited();
    }
    if (!finished_) RemoveCopy(db_->env_, dir_);
  }
  Status LinkFiles();
  size_t ImageCount() const override { return images_.size(); }
  Status WriteImage(size_t i, std::vector<std::string>* files) override;
  Status Finish() override;

 private:
  friend class DBImpl;
  enum class ImageState : uint8_t { kPending, kWriting, kWritten, kFailed };
  Status Claim(size_t i);
  Status CheckImagesDone();
  bool Pending(size_t i);
  Status WriteImageFiles(const MemtableImage& image, TableWriterResult* result);
  Status LinkFlushedFiles(const MemtableImage& image, TableWriterResult* result);
  Status LinkTable(uint64_t number);
  Status WriteManifest();

  // What the flush a copy waits for wrote: its new files, the version that
  // holds them (so that no compaction deletes them before they are linked),
  // and the families it flushed (a family dropped meanwhile is not among
  // them).
  struct Flushed {
    VersionRef version;
    std::vector<VersionEdit::NewFile> files;
    std::set<uint32_t> families;
  };

  DBImpl* const db_;
  const std::string dir_;
  const CheckpointOptions options_;
  VersionEdit snapshot_;  // guarded by mu_ while images are written
  VersionRef version_;    // keeps the linked files' records alive
  uint64_t manifest_number_ = 0;
  SequenceNumber seq_ = 0;  // the copy holds every write up to it
  uint64_t memtable_bytes_ = 0;  // of the memtables it copies (as mem_bytes_ counts them)
  std::optional<Flushed> flushed_;  // guarded by db_->mu_
  std::vector<MemtableImage> images_;
  std::mutex mu_;
  std::vector<ImageState> image_states_;  // guarded by mu_
  uint64_t image_bytes_ = 0;              // guarded by mu_
  bool finished_ = false;                 // guarded by mu_
  LiveCounter::Token open_;  // counts the copy until it is released
};

void DBImpl::CaptureCheckpoint(CheckpointCopy* copy, bool flushing) {
  versions_->SetLastSequence(last_sequence_.load());
  versions_->EncodeSnapshot(&copy->snapshot_);
  LeaveOutHiddenFiles(&copy->snapshot_);
  copy->version_ = versions_->current();
  copy->manifest_number_ = versions_->manifest_number();
  copy->seq_ = last_sequence_.load();
  copy->memtable_bytes_ = flushing ? 0 : mem_bytes_.load() + resident_bytes_;
  for (const auto& [id, cfd] : cfds_) {
    MemtableImage image;
    image.cf = id;
    image.flushed = flushing;
    image.options = cfd->options;
    image.options.pages_per_tile = TileSizeFor(*cfd);
    for (const auto& m : {cfd->mem, cfd->imm, cfd->resident}) {
      if (m != nullptr && !m->empty()) image.memtables.push_back(m);
    }
    if (image.memtables.empty()) continue;
    image.files = copy->version_->cfs.count(id) ? copy->version_->cfs.at(id) : nullptr;
    uint64_t& oldest = image.oldest_tombstone_time_us;  // 0: no tombstone
    for (uint64_t t : {cfd->first_tombstone_time_us.load(), cfd->imm_first_tombstone_time_us}) {
      if (t != 0) oldest = oldest == 0 ? t : std::min(oldest, t);
    }
    copy->images_.push_back(std::move(image));
  }
  copy->image_states_.assign(copy->images_.size(), CheckpointCopy::ImageState::kPending);
}

// Not in the checkpoint's synchronous part: a flush there held the caller
// for up to seconds. This checkpoint has copied the memtables already.
void DBImpl::FlushCopiesPastTheirShare() {
  if (imm_pending_ || checkpoint_image_bytes_.load() < options_.write_buffer_size / 4) return;
  SwitchMemtables(true);
}

bool DBImpl::CopyWouldBeFlushed() const {
  if (imm_pending_ || copy_bytes_ratio_ <= 0) return false;
  const double memtables = static_cast<double>(mem_bytes_.load() + resident_bytes_);
  return static_cast<double>(checkpoint_image_bytes_.load()) + copy_bytes_ratio_ * memtables >=
         static_cast<double>(options_.write_buffer_size / 4);
}

void DBImpl::HandFlushToCopies(const VersionEdit& edit) {
  if (copies_awaiting_flush_.empty()) return;
  std::set<uint32_t> families;
  for (const auto& [id, cfd] : cfds_) families.insert(id);
  for (CheckpointCopy* copy : copies_awaiting_flush_) {
    copy->flushed_ = CheckpointCopy::Flushed{versions_->current(), edit.new_files_, families};
    RecordMicrosSince(Ticker::kCheckpointFlushWaitMicros, imm_switched_at_);  // the copy switched them
  }
  copies_awaiting_flush_.clear();
  NoteFlushAwaited();
}

Status DBImpl::BeginCheckpoint(const std::string& dir, const CheckpointOptions& options,
                               std::unique_ptr<PendingCheckpoint>* checkpoint) {
  if (dir.empty()) return Status::InvalidArgument("checkpoint directory must not be empty");
  if (env_->FileExists(dir)) return Status::InvalidArgument(dir, "checkpoint directory exists");
  if (options.flush_first) {
    Status s = Flush();
    if (!s.ok()) return s;
  }
  auto copy = std::make_unique<CheckpointCopy>(this, dir, options);
  {
    std::lock_guard<std::mutex> w(write_mu_);
    std::lock_guard<std::mutex> l(mu_);
    const bool flush_pending_before = imm_pending_;
    if (!bg_error_.ok()) return bg_error_;
    // Memtables this copy would write only to see them flushed right after
    // go to files now, and the copy links those (the flush runs in the
    // background; the copy waits for it in its asynchronous part).
    if (!options.flush_first && CopyWouldBeFlushed()) {
      SwitchMemtables(true);
      if (!bg_error_.ok()) return bg_error_;
    }
    const bool flushing = imm_pending_ && !flush_pending_before;
    CaptureCheckpoint(copy.get(), flushing);
    if (flushing) {
      copies_awaiting_flush_.push_back(copy.get());
      NoteFlushAwaited();
      flush_view_ = copy->version_;
      Record(Ticker::kCheckpointFlushes, 1);
    } else {
      FlushCopiesPastTheirShare();  // if a flush ran when the last copy finished
    }
  }
  Status s = env_->CreateDirIfMissing(dir);
  if (!s.ok()) return s;
  s = copy->LinkFiles();
  if (!s.ok()) return s;  // the copy's destructor removes the directory
  *checkpoint = std::move(copy);
  return Status::OK();
}

Status DBImpl::Checkpoint(const std::string& dir) {
  std::unique_ptr<PendingCheckpoint> copy;
  Status s = BeginCheckpoint(dir, CheckpointOptions(), &copy);
  return s.ok() ? copy->Finish() : s;
}

Status DBImpl::CheckpointCopy::LinkFiles() {
  for (const VersionEdit::NewFile& f : snapshot_.new_files_) {
    for (uint64_t number : {f.meta.number, f.meta.patch_file}) {
      if (number == 0) continue;
      Status s = LinkTable(number);
      if (!s.ok()) return s;
      KillPoint("checkpoint.linked");
    }
  }
  return Status::OK();
}

// A table file of the database into the copy: a hard link, or a copy where
// the file system has none.
Status DBImpl::CheckpointCopy::LinkTable(uint64_t number) {
  Env* env = db_->env_;
  std::string src = TableFileName(db_->dbname_, number), dst = TableFileName(dir_, number);
  Status s = env->LinkFile(src, dst);
  if (s.IsNotSupported()) {
    std::string data;
    s = ReadFileToString(env, src, &data);
    if (s.ok()) s = WriteStringToFile(env, data, dst, /*sync=*/true);
  }
  return s;
}

// Waits for the flush of the memtables this copy switched, then links the
// family's files it wrote. A family dropped meanwhile had its files left
// out of the database: its memtables are copied instead.
Status DBImpl::CheckpointCopy::LinkFlushedFiles(const MemtableImage& image, TableWriterResult* result) {
  std::vector<FileMetaData> files;
  bool dropped = false;
  {
    std::unique_lock<std::mutex> l(db_->mu_);
    db_->bg_cv_.wait(l, [&] { return flushed_.has_value() || !db_->bg_error_.ok() || db_->shutting_down_; });
    if (!flushed_.has_value()) {
      return db_->bg_error_.ok() ? Status::Aborted(dir_, "the database closed before its flush for the checkpoint")
                                 : db_->bg_error_;
    }
    dropped = flushed_->families.count(image.cf) == 0;
    for (const VersionEdit::NewFile& f : flushed_->files) {
      if (f.cf == image.cf) files.push_back(f.meta);
    }
  }
  if (dropped) return WriteImageFiles(image, result);
  for (const FileMetaData& f : files) {
    Status s = LinkTable(f.number);
    if (!s.ok()) return s;
    KillPoint("checkpoint.linked");
  }
  result->files = std::move(files);
  return Status::OK();
}

Status DBImpl::CheckpointCopy::Claim(size_t i) {
  std::lock_guard<std::mutex> l(mu_);
  if (finished_) return Status::InvalidArgument(dir_, "checkpoint already finished");
  if (i >= images_.size()) return Status::InvalidArgument(dir_, "no such checkpoint image");
  if (image_states_[i] != ImageState::kPending) {
    return Status::InvalidArgument(dir_, "checkpoint image already written");
  }
  image_states_[i] = ImageState::kWriting;
  return Status::OK();
}

Status DBImpl::CheckpointCopy::WriteImage(size_t i, std::vector<std::string>* files) {
  Status s = Claim(i);
  if (!s.ok()) return s;
  TableWriterResult result;
  s = images_[i].flushed ? LinkFlushedFiles(images_[i], &result) : WriteImageFiles(images_[i], &result);
  std::lock_guard<std::mutex> l(mu_);
  image_states_[i] = s.ok() ? ImageState::kWritten : ImageState::kFailed;
  if (!s.ok()) return s;
  image_bytes_ += result.bytes_written;
  for (const FileMetaData& f : result.files) {
    if (files != nullptr) files->push_back(TableFileName("", f.number).substr(1));
    snapshot_.AddFile(images_[i].cf, 0, f);
    snapshot_.SetNextFileNumber(std::max(snapshot_.next_file_number_.value(), f.number + 1));
  }
  return Status::OK();
}

bool DBImpl::CheckpointCopy::Pending(size_t i) {
  std::lock_guard<std::mutex> l(mu_);
  return image_states_[i] == ImageState::kPending;
}

// OK when no image is being written or has failed.
Status DBImpl::CheckpointCopy::CheckImagesDone() {
  std::lock_guard<std::mutex> l(mu_);
  if (finished_) return Status::InvalidArgument(dir_, "checkpoint already finished");
  for (ImageState state : image_states_) {
    if (state == ImageState::kWriting) {
      return Status::InvalidArgument(dir_, "checkpoint image still being written");
    }
    if (state == ImageState::kFailed) return Status::IOError(dir_, "a checkpoint image failed");
  }
  return Status::OK();
}

Status DBImpl::CheckpointCopy::Finish() {
  Status s = CheckImagesDone();
  for (size_t i = 0; s.ok() && i < images_.size(); i++) {
    if (Pending(i)) s = WriteImage(i, nullptr);
  }
  if (s.ok()) s = CheckImagesDone();  // and none began meanwhile on another thread
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> l(mu_);
  db_->Record(Ticker::kBytesWrittenCheckpointImage, image_bytes_);
  db_->checkpoint_image_bytes_ += image_bytes_;
  {
    std::lock_guard<std::mutex> w(db_->write_mu_);
    std::lock_guard<std::mutex> dl(db_->mu_);
    if (memtable_bytes_ > 0) {
      db_->copy_bytes_ratio_ = static_cast<double>(image_bytes_) / static_cast<double>(memtable_bytes_);
    }
    db_->FlushCopiesPastTheirShare();
  }
  s = WriteManifest();
  if (!s.ok()) return s;
  finished_ = true;
  return Status::OK();
}

// Writes a family's memtables, as they were at seq_, into level-0 files of
// the copy: newer than every file it links (memtables and residents always
// are), so they come first in its level 0. The copy has no snapshots, so
// only the newest visible version of each key is kept.
Status DBImpl::CheckpointCopy::WriteImageFiles(const MemtableImage& image, TableWriterResult* result) {
  std::vector<std::unique_ptr<InternalIterator>> iters;
  std::vector<RangeTombstone> tombstones;
  for (const auto& m : image.memtables) {
    iters.push_back(NewVisibleVersionsIterator(m->NewIterator(), seq_));
    for (RangeTombstone& t : m->RangeTombstones()) {
      if (t.seq <= seq_) tombstones.push_back(std::move(t));
    }
  }
  std::unique_ptr<InternalIterator> input = NewMergingIterator(std::move(iters));
  const SecondaryDeletes* secondary = image.files != nullptr ? &image.files->secondary : nullptr;
  DBImpl* db = db_;
  auto deeper = [db, files = image.files](std::string_view lo, std::string_view hi) {
    return files != nullptr && (lo != hi || db->FilesMayContain(*files, lo, TableOpen::kNever));
  };
  CompactionStream stream(input.get(), tombstones, {}, deeper, secondary);
  TableWriterOptions wo;
  wo.dbname = dir_;
  wo.env = db_->env_;
  wo.cf_options = image.options;
  wo.bottommost = true;  // written once, off the caller's path: the codec of files that stay
  wo.sync = options_.sync;
  wo.now_us = db_->clock_->NowMicros();
  wo.oldest_tombstone_time_us = image.oldest_tombstone_time_us;
  wo.secondary_applied_seq = SecondaryAppliedSeq(secondary, {});
  wo.estimate_covered = CoveredEntriesEstimate(image.files, 0);
  wo.new_file_number = [db] {
    std::lock_guard<std::mutex> l(db->mu_);
    return db->versions_->NewFileNumber();
  };
  return WriteTables(wo, &stream, result);
}

Status DBImpl::CheckpointCopy::WriteManifest() {
  Env* env = db_->env_;
  // The copy needs no WAL: its log number points past every log.
  snapshot_.SetLogNumber(snapshot_.next_file_number_.value(), /*names_wal=*/false);
  Status s = options_.sync ? env->SyncDir(dir_) : Status::OK();  // the images' names
  std::unique_ptr<WritableFile> file;
  if (s.ok()) s = env->NewWritableFile(ManifestFileName(dir_, manifest_number_), &file);
  if (!s.ok()) return s;
  log::Writer writer(std::move(file), /*checksums=*/true);
  std::string record;
  snapshot_.EncodeTo(&record);
  s = writer.AddRecord(record);
  if (s.ok() && options_.sync) s = writer.Sync();
  if (s.ok()) s = writer.Close();
  if (s.ok()) {
    std::string current = ManifestFileName("", manifest_number_).substr(1) + "\n";
    s = WriteStringToFile(env, current, CurrentFileName(dir_), options_.sync);
  }
  if (s.ok() && options_.sync) s = env->SyncDir(dir_);
  return s;
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
