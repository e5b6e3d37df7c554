// DBImpl: opening, recovery from the WAL, closing, column families.
#include <algorithm>
#include <set>

#include "db/db_impl.h"
#include "db/memtable_inserter.h"
#include "db/write_batch_internal.h"
#include "sst/compression.h"
#include "wal/log_reader.h"
#include "util/heap_trim.h"
#include "util/kill_point.h"
#include "util/thread_name.h"

namespace lethe {

DBImpl::DBImpl(const Options& options, std::string dbname)
    : trim_heap_on_close_{options.heap_trim_interval_us}, options_(options), dbname_(std::move(dbname)),
      env_(options.env != nullptr ? options.env : Env::Default()),
      clock_(options.clock != nullptr ? options.clock : Clock::Default()) {
  budget_ = std::dynamic_pointer_cast<MemoryBudgetImpl>(options_.memory_budget);
  if (budget_ == nullptr) budget_ = MemoryBudgetImpl::Fixed(options_.page_cache_bytes);
  write_share_ = budget_->NewWriteBufferShare([this] {
    std::lock_guard<std::mutex> l(mu_);
    bg_cv_.notify_all();
  });
  TableReader::Options ro;
  ro.verify_checksums = options_.verify_checksums;
  ro.page_cache = budget_->page_cache();
  ro.cache_namespace = budget_->NewCacheNamespace();
  ro.counters = &read_counters_;
  table_cache_ = std::make_unique<TableCache>(dbname_, env_, options_.max_open_files, ro, budget_);
  if (options_.multi_get_threads > 0) read_pool_ = std::make_unique<ReadPool>(std::min(options_.multi_get_threads, 64));
  versions_ = std::make_unique<VersionSet>(dbname_, env_, clock_);
}

DBImpl::TrimHeapOnClose::~TrimHeapOnClose() {
  HeapTrimmer::Process().MaybeRelease(HeapTrimmer::NowMicros(), interval_us);
}

DBImpl::~DBImpl() {
  write_share_->Close();
  {
    std::lock_guard<std::mutex> l(mu_);
    shutting_down_ = true;
    shutting_down_flag_ = true;
    NoteFlushAwaited();
  }
  bg_cv_.notify_all();
  if (flush_thread_.joinable()) flush_thread_.join();
  if (compaction_thread_.joinable()) compaction_thread_.join();
  if (prev_log_) prev_log_->Close();
  if (log_) log_->Close();
}

// The ranges the manifest decoder also enforces (version_edit.cc): an
// option outside them could not be read back.
static Status ValidateColumnFamilyOptions(const ColumnFamilyOptions& o) {
  if (o.page_size < 64) return Status::InvalidArgument("page_size must be at least 64");
  if (o.pages_per_tile < 0 || o.pages_per_tile > 4096) {
    return Status::InvalidArgument("pages_per_tile must be in [1, 4096] or kPagesPerTileAuto (0)");
  }
  if (o.size_ratio < 2) return Status::InvalidArgument("size_ratio must be at least 2");
  if (o.bloom_bits_per_key < 0 || o.bloom_bits_per_key > 64) {
    return Status::InvalidArgument("bloom_bits_per_key must be in [0, 64]");
  }
  if (o.level0_compaction_trigger < 1 || o.level0_stop_writes_trigger < 1) {
    return Status::InvalidArgument("level-0 triggers must be at least 1");
  }
  if (static_cast<unsigned>(o.fade_file_pick) > static_cast<unsigned>(FadeFilePick::kOldestDelete)) {
    return Status::InvalidArgument("unknown fade_file_pick");
  }
  auto known = [](std::optional<Compression> c) { return !c || KnownCompression(static_cast<uint8_t>(*c)); };
  if (!known(o.compression) || !known(o.bottommost_compression) || !known(o.flush_compression)) {
    return Status::InvalidArgument("unknown compression");
  }
  if (static_cast<unsigned>(o.compaction_style) > static_cast<unsigned>(CompactionStyle::kTimeOrdered)) {
    return Status::InvalidArgument("unknown compaction_style");
  }
  if (o.time_ordered_max_files < 2) return Status::InvalidArgument("time_ordered_max_files must be at least 2");
  return Status::OK();
}

Status DB::Open(const Options& options, const std::string& name, std::unique_ptr<DB>* db) {
  db->reset();
  if (options.write_buffer_size < 4096) return Status::InvalidArgument("write_buffer_size must be at least 4096");
  if (options.memory_budget != nullptr && std::dynamic_pointer_cast<MemoryBudgetImpl>(options.memory_budget) == nullptr) {
    return Status::InvalidArgument("memory_budget must come from MemoryBudget::New");
  }
  Status v = ValidateColumnFamilyOptions(options.cf_defaults);
  if (!v.ok()) return v;
  auto impl = std::make_unique<DBImpl>(options, name);
  Status s = impl->OpenImpl();
  if (s.ok()) *db = std::move(impl);
  return s;
}

Status DestroyDB(const std::string& name, const Options& options) {
  Env* env = options.env != nullptr ? options.env : Env::Default();
  std::vector<std::string> children;
  Status s = env->GetChildren(name, &children);
  if (!s.ok()) return s.IsNotFound() ? Status::OK() : s;
  for (const std::string& c : children) {
    uint64_t n;
    if (ParseFileName(c, &n) != FileType::kUnknown) env->RemoveFile(name + "/" + c);
  }
  env->RemoveDir(name);  // fails harmlessly if foreign files remain
  return Status::OK();
}

ColumnFamilyData* DBImpl::AddColumnFamilyData(const ColumnFamilyDescriptor& d) {
  auto cfd = std::make_shared<ColumnFamilyData>();
  cfd->id = d.id;
  cfd->name = d.name;
  cfd->options = d.options;
  cfd->mem = std::make_shared<MemTable>();
  handles_.push_back(std::make_unique<ColumnFamilyHandleImpl>(this, cfd, d.id, d.name));
  cfd->handle = handles_.back().get();
  ColumnFamilyData* raw = cfd.get();
  cfds_[d.id] = std::move(cfd);
  InstallSuperVersion(raw);
  return raw;
}

Status DBImpl::NewLogFile() {
  uint64_t number = versions_->NewFileNumber();
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(LogFileName(dbname_, number), &file);
  if (s.ok()) KillPoint("wal.created");
  // A synced write must survive a crash, so the log's name must too.
  if (s.ok()) s = env_->SyncDir(dbname_);
  if (!s.ok()) return s;
  // The previous log stays open unsynced: a synced write syncs it first
  // (Write). Its predecessor held only flushed writes (a switch waits for the
  // previous flush), so it can go.
  std::lock_guard<std::mutex> lg(log_mu_);
  if (prev_log_) prev_log_->Close();
  prev_log_ = std::move(log_);
  log_ = std::make_unique<log::Writer>(std::move(file), options_.wal_checksums);
  log_number_ = number;
  return Status::OK();
}

Status DBImpl::LogAndApply(VersionEdit* edit) {
  Status s = versions_->LogAndApply(edit);
  if (!s.ok()) return s;
  // After the edit is durable, never before: a marker for an edit the
  // manifest may lack would fail a sound recovery. Not synced: losing it in
  // a crash only loses the check.
  std::lock_guard<std::mutex> lg(log_mu_);
  if (log_ != nullptr) {
    Status m = log_->AddRecord(EncodeManifestEditMarker(versions_->edit_number()));
    if (!m.ok()) {
      // The WAL may now end in a partial record: no write may follow it.
      RecordBackgroundError(m);
    }
  }
  return Status::OK();
}

Status DBImpl::RecoverLogFile(uint64_t number, SequenceNumber* max_seq, bool* torn) {
  std::string fname = LogFileName(dbname_, number);
  std::unique_ptr<SequentialFile> file;
  Status s = env_->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;
  log::Reader reader(std::move(file), options_.wal_checksums);
  std::string scratch;
  std::string_view record;
  WriteBatch batch;
  while (reader.ReadRecord(&record, &scratch)) {
    if (record.size() < WriteBatch::kHeaderSize) return Status::Corruption(fname, "WAL record too small");
    uint64_t edit_number = 0;
    bool marker_ok = false;
    if (DecodeManifestEditMarker(record, &edit_number, &marker_ok)) {
      if (!marker_ok) return Status::Corruption(fname, "bad manifest edit marker");
      if (edit_number > versions_->edit_number()) {
        return Status::Corruption(fname, "records manifest edit " + std::to_string(edit_number) +
                                             ", but the manifest ends at edit " +
                                             std::to_string(versions_->edit_number()) +
                                             ": the manifest lost durable edits (cut short or damaged)");
      }
      continue;
    }
    WriteBatchInternal::SetContents(&batch, record);
    SequenceNumber seq = WriteBatchInternal::Sequence(batch);
    MemTableInserter inserter(&cfds_, clock_, seq);
    s = batch.Iterate(&inserter);
    if (!s.ok()) return Status::Corruption(fname, s.message());
    if (batch.Count() > 0) *max_seq = std::max(*max_seq, seq + batch.Count() - 1);
  }
  if (!reader.status().ok()) return reader.status();
  if (reader.damaged_before_end()) {
    return Status::Corruption(fname, "damaged record at offset " + std::to_string(reader.offset()) +
                                         " is followed by more records (not a torn write)");
  }
  *torn = reader.tail_dropped_bytes() > 0;
  return Status::OK();
}

Status DBImpl::OpenImpl() {
  Status s = env_->CreateDirIfMissing(dbname_);
  if (!s.ok()) return s;
  s = env_->LockFile(LockFileName(dbname_), &db_lock_);
  if (!s.ok()) return s;
  std::unique_lock<std::mutex> l(mu_);
  if (env_->FileExists(CurrentFileName(dbname_))) {
    if (options_.error_if_exists) return Status::InvalidArgument(dbname_, "database exists (error_if_exists)");
    s = versions_->Recover();
    if (!s.ok()) return s;
    s = versions_->RollManifest();
  } else {
    if (!options_.create_if_missing) return Status::InvalidArgument(dbname_, "does not exist (create_if_missing is false)");
    s = versions_->CreateNew(options_.cf_defaults);
  }
  if (!s.ok()) return s;
  for (const auto& [id, files] : versions_->current()->cfs) AddColumnFamilyData(files->descriptor);
  last_sequence_ = versions_->last_sequence();

  // Replay the WALs newer than the manifest's log number, oldest first.
  std::vector<std::string> children;
  s = env_->GetChildren(dbname_, &children);
  if (!s.ok()) return s;
  std::vector<uint64_t> logs;
  for (const std::string& c : children) {
    uint64_t n;
    FileType t = ParseFileName(c, &n);
    if (t == FileType::kLog && n >= versions_->log_number()) logs.push_back(n);
    if (t != FileType::kUnknown && t != FileType::kCurrent && t != FileType::kLock) versions_->MarkFileNumberUsed(n);
  }
  std::sort(logs.begin(), logs.end());
  // The log the manifest names exists until an edit moves past it. Missing,
  // the manifest lost that edit after it was durable (a crash can only tear
  // an edit not yet acknowledged, whose log is still there): the writes
  // moved out of the deleted logs would be gone without a word.
  if (versions_->log_names_wal() &&
      std::find(logs.begin(), logs.end(), versions_->log_number()) == logs.end()) {
    return Status::Corruption(LogFileName(dbname_, versions_->log_number()),
                              "the manifest names this WAL, which is missing: the manifest lost durable "
                              "edits (cut short or damaged)");
  }
  // Every table the manifest names must be there: a missing one means a
  // damaged or incomplete copy, which reads would only meet later.
  {
    std::set<uint64_t> present, live;
    for (const std::string& c : children) {
      uint64_t n;
      if (ParseFileName(c, &n) == FileType::kTable) present.insert(n);
    }
    versions_->AddLiveFiles(&live);
    for (uint64_t n : live) {
      if (present.count(n) == 0) {
        return Status::Corruption(TableFileName(dbname_, n), "the manifest names this table file, which is missing");
      }
    }
  }
  SequenceNumber max_seq = last_sequence_;
  for (uint64_t n : logs) {
    bool torn = false;
    s = RecoverLogFile(n, &max_seq, &torn);
    if (!s.ok()) return s;
    // A torn log ends the replay: a later log's writes came after the lost
    // ones, and none of them was synced (a synced write syncs the previous
    // log first), so the recovered state stays a prefix of the writes.
    if (torn) break;
  }
  last_sequence_ = max_seq;
  versions_->SetLastSequence(max_seq);

  if (options_.use_wal) {
    s = NewLogFile();
    if (!s.ok()) return s;
  }
  // Whatever the WALs held goes to level 0 now, so old WALs can go.
  bool recovered = false;
  for (auto& [id, cfd] : cfds_) {
    if (!cfd->mem->empty()) {
      cfd->imm = std::move(cfd->mem);
      cfd->imm_first_tombstone_time_us = cfd->first_tombstone_time_us;
      cfd->first_tombstone_time_us = 0;
      cfd->mem = std::make_shared<MemTable>(cfd->imm->num_entries());
      InstallSuperVersion(cfd.get());
      recovered = true;
    }
  }
  imm_log_number_ = options_.use_wal ? log_number_ : versions_->NewFileNumber();
  if (recovered) {
    imm_pending_ = true;
    s = FlushImmutable(l);
    if (!s.ok()) return s;
  } else if (!logs.empty()) {
    VersionEdit edit;
    edit.SetLogNumber(imm_log_number_, options_.use_wal);
    s = LogAndApply(&edit);
    if (!s.ok()) return s;
  }
  QueueUnreadPagePunches();
  DeleteObsoleteFiles(l);
  flush_thread_ = std::thread([this] { FlushThread(); });
  compaction_thread_ = std::thread([this] { CompactionThread(); });
  NameThread(flush_thread_, "lethe-flush");
  NameThread(compaction_thread_, "lethe-compact");
  return Status::OK();
}

ColumnFamilyHandle* DBImpl::DefaultColumnFamily() {
  std::lock_guard<std::mutex> l(mu_);
  return cfds_.at(kDefaultColumnFamilyId)->handle;
}

Status DBImpl::CreateColumnFamily(const std::string& name, const ColumnFamilyOptions& options,
                                  ColumnFamilyHandle** handle) {
  if (name.empty()) return Status::InvalidArgument("column family name must not be empty");
  Status v = ValidateColumnFamilyOptions(options);
  if (!v.ok()) return v;
  std::lock_guard<std::mutex> w(write_mu_);
  std::lock_guard<std::mutex> l(mu_);
  if (!bg_error_.ok()) return bg_error_;
  for (const auto& [id, cfd] : cfds_) {
    if (cfd->name == name) return Status::InvalidArgument("column family exists", name);
  }
  ColumnFamilyDescriptor d{versions_->NewColumnFamilyId(), name, options};
  VersionEdit edit;
  edit.AddColumnFamily(d);
  versions_->SetLastSequence(last_sequence_);
  Status s = LogAndApply(&edit);
  if (!s.ok()) return s;
  *handle = AddColumnFamilyData(d)->handle;
  return Status::OK();
}

Status DBImpl::DropColumnFamily(ColumnFamilyHandle* handle) {
  if (handle == nullptr) return Status::InvalidArgument("null column family");
  std::lock_guard<std::mutex> w(write_mu_);
  std::unique_lock<std::mutex> l(mu_);
  if (handle->id() == kDefaultColumnFamilyId) return Status::InvalidArgument("the default column family cannot be dropped");
  auto it = cfds_.find(handle->id());
  if (it == cfds_.end() || it->second->handle != handle) return Status::InvalidArgument("column family already dropped", handle->name());
  VersionEdit edit;
  edit.DropColumnFamily(handle->id());
  versions_->SetLastSequence(last_sequence_);
  Status s = LogAndApply(&edit);
  if (!s.ok()) return s;
  static_cast<ColumnFamilyHandleImpl*>(handle)->dropped = true;
  // The handle keeps the family's data until close: let go of what is large.
  ColumnFamilyData* cfd = it->second.get();
  cfd->super_versions.Clear();
  cfd->super_version.reset();
  cfd->mem.reset();
  cfd->imm.reset();
  if (cfd->resident != nullptr) {
    resident_bytes_ -= std::min(resident_bytes_, cfd->resident->ApproximateMemoryUsage());
    cfd->resident.reset();
  }
  cfds_.erase(it);
  DeleteObsoleteFiles(l);
  return Status::OK();
}

std::vector<ColumnFamilyHandle*> DBImpl::ListColumnFamilies() {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<ColumnFamilyHandle*> result;
  for (const auto& [id, cfd] : cfds_) result.push_back(cfd->handle);
  return result;
}

ColumnFamilyHandle* DBImpl::GetColumnFamily(const std::string& name) {
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [id, cfd] : cfds_) {
    if (cfd->name == name) return cfd->handle;
  }
  return nullptr;
}

}  // namespace lethe
