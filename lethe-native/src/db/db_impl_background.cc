// DBImpl: the flush thread, compactions and obsolete-file deletion.
#include <algorithm>

#include "compaction/compaction_stream.h"
#include "compaction/fade.h"
#include "compaction/table_writer.h"
#include "compaction/time_ordered.h"
#include "db/db_impl.h"
#include "db/table_output_rules.h"
#include "iterator/merging_iterator.h"
#include "util/heap_trim.h"
#include "util/kill_point.h"

namespace lethe {

void DBImpl::RecordBackgroundError(const Status& s) {
  if (bg_error_.ok() && !s.ok() && !s.IsAborted()) bg_error_ = s;
  NoteFlushAwaited();
  bg_cv_.notify_all();
}

bool DBImpl::FlushAwaited() const {
  return imm_pending_ && bg_error_.ok() && !shutting_down_ && (imm_awaited_ || !copies_awaiting_flush_.empty());
}

void DBImpl::NoteFlushAwaited() { flush_awaited_.store(FlushAwaited(), std::memory_order_relaxed); }

bool DBImpl::GiveWayToAwaitedFlush(std::chrono::milliseconds limit) {
  if (!flush_awaited_.load(std::memory_order_relaxed)) return true;
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> l(mu_);
  const bool installed = bg_cv_.wait_for(l, limit, [this] { return !FlushAwaited(); });
  NoteFlushAwaited();
  RecordMicrosSince(Ticker::kCompactionGiveWayMicros, start);
  return installed;
}

uint64_t DBImpl::NewPendingFileNumber() {
  std::lock_guard<std::mutex> l(mu_);
  uint64_t n = versions_->NewFileNumber();
  pending_outputs_.insert(n);
  return n;
}

void DBImpl::ReleasePendingOutputs(const std::vector<FileMetaData>& files) {
  for (const FileMetaData& f : files) pending_outputs_.erase(f.number);
}

// The longest a compaction waits for one awaited flush; past it the
// compaction runs on beside it (a flush normally takes well under a second).
static constexpr std::chrono::milliseconds kGiveWayLimit{10'000};

// Whether no level below `out_level` holds a file: a compaction's outputs
// then hold the oldest data of their key range, as RocksDB's bottommost level.
static bool BottommostOutput(const ColumnFamilyFiles& files, int out_level) {
  for (int l = out_level + 1; l < kNumLevels; l++) {
    if (!files.levels[l].empty()) return false;
  }
  return true;
}

// The level-0 files older than a run of level-0 inputs (level 0 is newest
// first, and a time-ordered plan takes neighbours).
static std::vector<FileRef> OlderLevel0Files(const ColumnFamilyFiles& files, const CompactionPlan& plan) {
  const auto& l0 = files.levels[0];
  auto last = std::find(l0.begin(), l0.end(), plan.inputs[0].back());
  return last == l0.end() ? std::vector<FileRef>() : std::vector<FileRef>(last + 1, l0.end());
}

// A level-0 output takes its inputs' sequence bounds, whatever its entries
// kept, so that it sorts where they stood: before every older file, behind
// every newer one.
static void KeepLevel0Place(const CompactionPlan& plan, std::vector<FileMetaData>* outputs) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const FileRef& f : plan.inputs[0]) {
    lo = std::min(lo, f->smallest_seq);
    hi = std::max(hi, f->largest_seq);
  }
  for (FileMetaData& f : *outputs) {
    f.smallest_seq = std::min(f.smallest_seq, lo);
    f.largest_seq = std::max(f.largest_seq, hi);
  }
}

uint64_t DBImpl::OldestSnapshot() {
  return snapshots_.empty() ? kMaxSequenceNumber : *snapshots_.begin();
}

bool DBImpl::BudgetFlushDue() {
  return write_share_->flush_requested() && !imm_pending_ && bg_error_.ok() &&
         mem_bytes_.load(std::memory_order_relaxed) > 0;
}

bool DBImpl::FadeFlushDue() {
  if (imm_pending_ || !bg_error_.ok()) return false;
  uint64_t now = clock_->NowMicros();
  for (const auto& [id, cfd] : cfds_) {
    uint64_t first = cfd->first_tombstone_time_us.load(std::memory_order_relaxed);
    if (cfd->options.delete_persistence_threshold_us == 0 || first == 0) continue;
    const ColumnFamilyFiles* files = versions_->current()->Find(id);
    const int last_rank =
        files == nullptr ? 0 : FadeRank(ComputeLevelTargets(*files, cfd->options), FadeLastLevel(*files));
    if (now >= first && now - first >= FadeMemtableDeadlineUs(cfd->options, last_rank)) {
      return true;
    }
  }
  return false;
}

uint64_t DBImpl::FadeCheckPeriod() {
  uint64_t period = 0;
  for (const auto& [id, cfd] : cfds_) {
    if (cfd->options.delete_persistence_threshold_us == 0) continue;
    uint64_t p = FadeCheckPeriodUs(cfd->options);
    period = period == 0 ? p : std::min(period, p);
  }
  return period;
}

void DBImpl::FlushThread() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    if (!WaitForFlushWork(l, [this] { return shutting_down_ || (imm_pending_ && bg_error_.ok()); })) continue;
    if (shutting_down_) return;
    // Where a crash loses only the switch, and a test may hold the flush
    // before it looks at the database.
    l.unlock();
    KillPoint("flush.woken");
    l.lock();
    if (shutting_down_ || !imm_pending_ || !bg_error_.ok()) continue;
    RecordMicrosSince(Ticker::kFlushDelayMicros, imm_switched_at_);
    const auto start = std::chrono::steady_clock::now();
    Status s = FlushImmutable(l);
    RecordMicrosSince(Ticker::kFlushMicros, start);
    if (!s.ok()) RecordBackgroundError(s);
    bg_cv_.notify_all();
    TrimHeap(l);
  }
}

// Memtables grow into room the page cache gives up; their blocks are mapped
// apart from the heap, so the pages the cache frees meanwhile would stay
// resident next to them until a flush or compaction trims the heap. Under a
// steady write rate a flush comes every few seconds, but after a pause (a
// window firing) the memtables grow from nearly nothing and the page cache
// that filled the pause gives way for seconds: the trim comes then.
template <typename Ready>
bool DBImpl::WaitForFlushWork(std::unique_lock<std::mutex>& l, Ready ready) {
  if (options_.heap_trim_interval_us == 0 || !budget_->shared()) {
    bg_cv_.wait(l, ready);
    return true;
  }
  if (bg_cv_.wait_for(l, std::chrono::microseconds(kSqueezeCheckMicros), ready)) return true;
  if (budget_->SqueezedEnoughToTrim()) TrimHeap(l, std::min(options_.heap_trim_interval_us, kSqueezeTrimMicros));
  return false;
}

void DBImpl::TrimHeap(std::unique_lock<std::mutex>& l, uint64_t interval_us) {
  l.unlock();
  const auto start = std::chrono::steady_clock::now();
  if (HeapTrimmer::Process().MaybeRelease(HeapTrimmer::NowMicros(), interval_us)) {
    RecordMicrosSince(Ticker::kHeapTrimMicros, start);
    budget_->HeapTrimmed();
    Record(Ticker::kHeapTrims, 1);
  }
  l.lock();
}

bool DBImpl::PickBackgroundCompaction(ColumnFamilyData** cfd_out, CompactionPlan* plan_out) {
  double best = 0;
  bool found = false;
  for (auto& [id, cfd] : cfds_) {
    const ColumnFamilyFiles* files = versions_->current()->Find(id);
    if (files == nullptr) continue;
    auto plan = PickCompaction(*files, cfd->options, cfd->pointers, clock_->NowMicros(), OldestSnapshot());
    if (plan && plan->score > best) {
      best = plan->score;
      *cfd_out = cfd.get();
      *plan_out = std::move(*plan);
      found = true;
    }
  }
  return found;
}

void DBImpl::CompactionThread() {
  std::unique_lock<std::mutex> cl(compaction_mu_, std::defer_lock);
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    ColumnFamilyData* cfd = nullptr;
    CompactionPlan plan;
    bool flush_due = false, compaction_due = false;
    auto ready = [&] {
      if (shutting_down_) return true;
      if (page_drops_pending_ && bg_error_.ok()) return true;
      if (BudgetFlushDue()) return flush_due = true;
      if (!options_.background_compactions || !bg_error_.ok() || manual_compactions_ != 0) return false;
      flush_due = FadeFlushDue();
      compaction_due = PickBackgroundCompaction(&cfd, &plan);
      return flush_due || compaction_due;
    };
    // With FADE on, budgets expire while nothing happens: wake up periodically.
    uint64_t period = FadeCheckPeriod();
    if (period == 0) {
      bg_cv_.wait(l, ready);
    } else if (!bg_cv_.wait_for(l, std::chrono::microseconds(period), ready)) {
      if (page_drops_deferred_) page_drops_pending_ = true;  // their wait may be over
      continue;
    }
    if (shutting_down_) return;
    if (page_drops_pending_ && bg_error_.ok()) {
      // Secondary deletes: metadata-only page drops, under the compaction
      // lock so that no compaction rewrites the files meanwhile.
      l.unlock();
      cl.lock();
      l.lock();
      if (!shutting_down_ && bg_error_.ok()) {
        compaction_running_ = true;
        Status s = DropCoveredPages(l);
        if (s.ok()) {
          // After the drop's references to the old file records are gone:
          // whole files go, holes are punched where nothing reads them.
          DeleteObsoleteFiles(l);
          s = TidySecondaryDeletes();
        }
        compaction_running_ = false;
        if (!s.ok()) RecordBackgroundError(s);
      }
      cl.unlock();
      bg_cv_.notify_all();
      continue;
    }
    if (flush_due) {
      // FADE: a memtable's tombstones outlived its budget; or the memory
      // budget asked for a flush. Switching needs the
      // writer lock, taken without blocking: a writer stalled on compaction
      // may hold it, and this thread must stay free to compact.
      l.unlock();
      std::unique_lock<std::mutex> w(write_mu_, std::try_to_lock);
      l.lock();
      // Both may compact in memory: the budget bounds what residents keep, and tombstones
      // never stay in memory past a flush (they are dropped or go to files).
      if (w.owns_lock() && !shutting_down_ && (BudgetFlushDue() || FadeFlushDue())) SwitchMemtables();
      if (w.owns_lock()) {
        l.unlock();
        w.unlock();
        l.lock();
      } else if (!compaction_due) {
        bg_cv_.wait_for(l, std::chrono::milliseconds(1));
      }
      if (!compaction_due) continue;
    }
    // Take the compaction lock in order (compaction_mu_ before mu_), then
    // pick again: the version may have changed meanwhile.
    l.unlock();
    cl.lock();
    l.lock();
    if (!shutting_down_ && bg_error_.ok() && PickBackgroundCompaction(&cfd, &plan)) {
      compaction_running_ = true;
      Status s = RunCompaction(l, cfd, plan);
      compaction_running_ = false;
      if (!s.ok()) RecordBackgroundError(s);
    }
    cl.unlock();
    bg_cv_.notify_all();
    TrimHeap(l);
  }
}

// Whether moving the plan's file keeps its pages in the codec of the level
// it lands in: a level-0 file is in flush_compression, which must not reach
// the levels below when it differs from theirs.
static bool MoveKeepsCodec(const ColumnFamilyOptions& o, const CompactionPlan& plan) {
  return plan.level != 0 || OutputCompression(o, false, /*flush=*/true) == OutputCompression(o, false, false);
}

Status DBImpl::RunCompaction(std::unique_lock<std::mutex>& l, ColumnFamilyData* cfd,
                             const CompactionPlan& plan) {
  uint32_t cf = cfd->id;
  ColumnFamilyOptions cf_options = cfd->options;
  cf_options.pages_per_tile = TileSizeFor(*cfd);
  VersionEdit edit;
  if (plan.inputs[0].empty()) return Status::OK();
  if (plan.IsTrivialMove() && MoveKeepsCodec(cf_options, plan)) {
    const FileRef& f = plan.inputs[0][0];
    edit.DeleteFile(cf, plan.level, f->number);
    edit.AddFile(cf, plan.output_level, *f);
    versions_->SetLastSequence(last_sequence_.load());
    Status s = LogAndApply(&edit);
    if (!s.ok()) return s;
    cfd->pointers.after[plan.level] = f->largest;
    InstallSuperVersions();
    Record(Ticker::kTrivialMoves, 1);
    return Status::OK();
  }

  // Shown in the statistics while it runs; every return below holds mu_.
  running_compaction_ = {clock_->NowMicros(), plan.InputBytes()};
  struct EndsRunning {
    RunningCompaction* running;
    ~EndsRunning() { *running = {}; }
  } ends_running{&running_compaction_};
  std::vector<SequenceNumber> snapshots = SnapshotList();
  VersionRef version = versions_->current();  // pins the input files
  std::shared_ptr<const ColumnFamilyFiles> files = version->cfs.at(cf);
  l.unlock();

  std::vector<std::unique_ptr<InternalIterator>> iters;
  std::vector<RangeTombstone> tombstones;
  uint64_t input_bytes = 0, tombstone_time = 0;
  struct TombstoneSource {
    std::string smallest, largest;
    uint64_t time_us;
  };
  std::vector<TombstoneSource> tombstone_sources;  // inputs holding tombstones
  Status s;
  for (int which = 0; which < 2 && s.ok(); which++) {
    int level = which == 0 ? plan.level : plan.output_level;
    for (const FileRef& f : plan.inputs[which]) {
      input_bytes += f->file_size;
      // Tombstones written for entries under secondary deletes count from
      // the time those deletes were made.
      const uint64_t invalid_since = FadeInvalidSinceUs(*files, *f);
      if (invalid_since != 0 && (tombstone_time == 0 || invalid_since < tombstone_time)) {
        tombstone_time = invalid_since;
      }
      if (invalid_since != 0) tombstone_sources.push_back({f->smallest, f->largest, invalid_since});
      std::shared_ptr<const TableReader> table;
      s = table_cache_->FindTable(*f, &table);
      if (!s.ok()) break;
      const auto& t = table->range_tombstones();
      tombstones.insert(tombstones.end(), t.begin(), t.end());
      if (level == 0) iters.push_back(NewLevelIterator({f}, table_cache_.get(), false));
    }
    if (level > 0 && !plan.inputs[which].empty()) {
      iters.push_back(NewLevelIterator(plan.inputs[which], table_cache_.get(), false));
    }
  }
  TableWriterResult result;
  if (s.ok()) {
    auto input = NewMergingIterator(std::move(iters));
    int out_level = plan.output_level;
    // A run of level-0 files merged into level 0 (time-ordered) has the
    // level-0 files after it below it: they hold older versions.
    std::vector<FileRef> older_l0 = out_level == 0 ? OlderLevel0Files(*files, plan) : std::vector<FileRef>();
    // Whether a level below the output may hold keys in [lo, hi].
    auto deeper = [files, out_level, &older_l0](std::string_view lo, std::string_view hi) {
      for (const FileRef& f : older_l0) {
        if (f->Overlaps(lo, hi)) return true;
      }
      for (int lvl = out_level + 1; lvl < kNumLevels; lvl++) {
        const auto& level = files->levels[lvl];
        auto it = FirstFileEndingAtOrAfter(level.begin(), level.end(), lo);
        if (it != level.end() && !(hi < (*it)->smallest)) return true;
      }
      return false;
    };
    CompactionStream stream(input.get(), tombstones, snapshots, deeper, &files->secondary);
    // Sequence 0 would move a level-0 output behind older files.
    if (out_level > 0) stream.ZeroOldSequences();
    TableWriterOptions wo;
    wo.dbname = dbname_;
    wo.env = env_;
    wo.cf_options = cf_options;
    // A level-0 output is one sorted run: one file.
    wo.max_file_bytes = out_level > 0 ? cf_options.target_file_size : UINT64_MAX;
    // A time-ordered file is never merged down: it is written where it stays.
    wo.bottommost = out_level == 0 || BottommostOutput(*files, out_level);
    wo.now_us = clock_->NowMicros();
    wo.oldest_tombstone_time_us = tombstone_time;
    wo.secondary_applied_seq = SecondaryAppliedSeq(&files->secondary, snapshots);
    // An output's tombstones come from inputs overlapping its key range: it
    // takes their oldest time, not the oldest of the whole compaction (which
    // would age every output of a wide compaction at once).
    wo.oldest_tombstone_time = [&tombstone_sources, tombstone_time](std::string_view lo, std::string_view hi) {
      uint64_t t = 0;
      for (const TombstoneSource& src : tombstone_sources) {
        if (hi < src.smallest || src.largest < lo) continue;
        if (t == 0 || src.time_us < t) t = src.time_us;
      }
      return t != 0 ? t : tombstone_time;
    };
    wo.estimate_covered = CoveredEntriesEstimate(files, out_level + 1);
    wo.new_file_number = [this] { return NewPendingFileNumber(); };
    // Between keys: a flush someone waits for goes first, and a shutdown stops the job.
    wo.should_stop = [this, give_way = true]() mutable {
      if (give_way) give_way = GiveWayToAwaitedFlush(kGiveWayLimit);
      return shutting_down_flag_.load(std::memory_order_relaxed);
    };
    s = WriteTables(wo, &stream, &result);
    Record(Ticker::kSecondaryBytesCompacted, stream.stats().secondary_removed_bytes);
  }
  Record(Ticker::kBytesReadCompaction, input_bytes);
  if (s.ok() && !result.files.empty()) s = env_->SyncDir(dbname_);
  KillPoint("compaction.outputs_written");

  l.lock();
  if (s.ok() && cfds_.count(cf) == 0) s = Status::Aborted("column family dropped during compaction");
  if (s.ok()) {
    for (int which = 0; which < 2; which++) {
      int level = which == 0 ? plan.level : plan.output_level;
      for (const FileRef& f : plan.inputs[which]) edit.DeleteFile(cf, level, f->number);
    }
    if (plan.output_level == 0) KeepLevel0Place(plan, &result.files);
    for (const FileMetaData& f : result.files) edit.AddFile(cf, plan.output_level, f);
    versions_->SetLastSequence(last_sequence_.load());
    s = LogAndApply(&edit);
  }
  if (!s.ok() && versions_->manifest_failed()) return s;  // outputs stay pending: the edit may be durable
  ReleasePendingOutputs(result.files);
  if (!s.ok()) {
    for (const FileMetaData& f : result.files) env_->RemoveFile(TableFileName(dbname_, f.number));
    return s;
  }
  KillPoint("compaction.installed");
  Record(Ticker::kBytesWrittenCompaction, result.bytes_written);
  Record(CompactionBytesTicker(plan.reason), result.bytes_written);
  Record(CompactionTicker(plan.reason), 1);
  std::string largest;
  for (const FileRef& f : plan.inputs[0]) largest = std::max(largest, f->largest);
  cfd->pointers.after[plan.level] = largest;
  InstallSuperVersions();
  version.reset();  // else the inputs it pins would stay on disk until the next flush or compaction
  DeleteObsoleteFiles(l);
  return TidySecondaryDeletes();
}

void DBImpl::DeleteObsoleteFiles(std::unique_lock<std::mutex>& l) {
  std::set<uint64_t> live = pending_outputs_;
  versions_->AddLiveFiles(&live);
  std::vector<std::string> children;
  if (!env_->GetChildren(dbname_, &children).ok()) return;
  std::vector<std::pair<uint64_t, std::string>> obsolete;  // table number (0 if not a table), name
  for (const std::string& c : children) {
    uint64_t n;
    bool keep = true;
    const FileType type = ParseFileName(c, &n);
    switch (type) {
      case FileType::kTable: keep = live.count(n) > 0; break;
      case FileType::kLog: keep = n >= versions_->log_number() || n == log_number_; break;
      case FileType::kManifest: keep = n >= versions_->manifest_number(); break;
      case FileType::kTemp:
        // Left by an interrupted manifest switch: removed at once, while no
        // switch can write one.
        env_->RemoveFile(dbname_ + "/" + c);
        break;
      default: break;
    }
    // A file found obsolete stays so: numbers are never reused.
    if (!keep) obsolete.emplace_back(type == FileType::kTable ? n : 0, dbname_ + "/" + c);
  }
  const std::vector<Punch> punches = TakeDuePunches();
  if (obsolete.empty() && punches.empty()) return;
  removals_running_++;
  l.unlock();
  for (const auto& [table, fname] : obsolete) {
    if (table != 0) table_cache_->Evict(table);
    env_->RemoveFile(fname);
    KillPoint("obsolete_files.removing");
  }
  PunchHoles(punches);
  l.lock();
  removals_running_--;
  bg_cv_.notify_all();
}

Status DBImpl::WaitForFlush(std::unique_lock<std::mutex>& l) {
  bg_cv_.wait(l, [this] { return (!imm_pending_ && removals_running_ == 0) || !bg_error_.ok() || shutting_down_; });
  return bg_error_;
}

Status DBImpl::Flush() {
  std::lock_guard<std::mutex> w(write_mu_);
  std::unique_lock<std::mutex> l(mu_);
  Status s = WaitForFlush(l);
  if (!s.ok()) return s;
  bool any = false;
  for (const auto& [id, cfd] : cfds_) any = any || !cfd->mem->empty() || cfd->resident != nullptr;
  if (!any) return Status::OK();
  SwitchMemtables(true, /*awaited=*/true);
  return WaitForFlush(l);
}

static bool HoldsTombstones(const ColumnFamilyFiles& files, int level) {
  for (const FileRef& f : files.levels[level]) {
    if (f->num_point_tombstones + f->num_range_tombstones > 0) return true;
  }
  return false;
}

Status DBImpl::CompactAll() {
  Status s = Flush();
  if (!s.ok()) return s;
  std::unique_lock<std::mutex> cl(compaction_mu_);
  std::unique_lock<std::mutex> l(mu_);
  manual_compactions_++;
  std::vector<uint32_t> ids;
  for (const auto& [id, cfd] : cfds_) ids.push_back(id);
  for (uint32_t id : ids) {
    auto it = cfds_.find(id);
    if (it == cfds_.end()) continue;
    ColumnFamilyData* cfd = it->second.get();
    const ColumnFamilyFiles* files = versions_->current()->Find(id);
    if (TimeOrderedActive(*files, cfd->options)) {
      // Every file into one level-0 file, its tombstones dropped.
      if (s.ok() && (files->levels[0].size() > 1 || HoldsTombstones(*files, 0))) {
        s = RunCompaction(l, cfd, PlanLevelCompaction(*files, 0, 0, CompactionReason::kManual));
      }
      continue;
    }
    int target = std::max(1, files->DeepestNonEmptyLevel());
    // Push every level down into the target level, then rewrite the target
    // level itself so that its tombstones are dropped where possible.
    for (int level = 0; level <= target && s.ok(); level++) {
      files = versions_->current()->Find(id);
      int out = level < target ? level + 1 : target;
      if (level == target && !HoldsTombstones(*files, target)) break;
      CompactionPlan plan = PlanLevelCompaction(*files, level, out, CompactionReason::kManual);
      if (plan.IsTrivialMove() && level == target) continue;
      s = RunCompaction(l, cfd, plan);
    }
  }
  manual_compactions_--;
  bg_cv_.notify_all();
  if (!s.ok()) RecordBackgroundError(s);
  return s;
}

Status DBImpl::WaitForBackgroundWork() {
  std::unique_lock<std::mutex> l(mu_);
  while (true) {
    if (!bg_error_.ok() || shutting_down_) return bg_error_;
    ColumnFamilyData* cfd;
    CompactionPlan plan;
    bool compaction_due = options_.background_compactions &&
                          (PickBackgroundCompaction(&cfd, &plan) || FadeFlushDue());
    if (!imm_pending_ && !compaction_running_ && removals_running_ == 0 && !compaction_due && !page_drops_pending_) {
      return Status::OK();
    }
    bg_cv_.notify_all();
    bg_cv_.wait(l);
  }
}

}  // namespace lethe
