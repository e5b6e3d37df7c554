// DBImpl: flushes of immutable memtables, to level-0 files or, compacted in
// memory, to a resident memtable.
//
// Compaction in memory: a memtable of a workload that deletes what it wrote
// a moment ago (fired windows, cleared state, expired entries under the
// horizon) is mostly dead when it fills. Written to a file, its few live
// entries are written again at every flush. Instead the flush runs the same
// rewrite rules (CompactionStream) into memory, and when what survives fits
// the room (a quarter of the write buffers; on a shared budget, a quarter of
// all databases' write buffers), it stays as the family's resident memtable:
// readers see it between the immutable memtable and the files, the next
// flush merges it with the next immutable one, and a flush that must reach
// files (Flush) writes it out; a checkpoint copies it.
//
// A resident memtable holds values and merge operands only: survivors that
// include a point or range tombstone go to files. So a delete is never kept
// from the files it must reach, and FADE's deadlines, which follow the
// tombstones, need not know of residents. Only without a write-ahead log: a
// WAL is retired when its memtable is flushed, and the resident entries
// would then exist nowhere else.
#include <algorithm>

#include "compaction/compaction_stream.h"
#include "compaction/table_writer.h"
#include "db/db_impl.h"
#include "db/table_output_rules.h"
#include "iterator/merging_iterator.h"
#include "iterator/visible_versions_iterator.h"
#include "util/kill_point.h"

namespace lethe {

namespace {

// About what an entry takes in a memtable: key, tag, value, delete key,
// their lengths, and its share of the table's leaves (32 slots of 16 bytes,
// half full after splits).
size_t MemTableEntryBytes(const OutputEntry& e) { return e.ikey.size() + e.value.size() + 48; }

// Whether survivors of `bytes` after `read` of `total` input keys will
// likely outgrow `room`: they took more than twice their share of it. Keys
// come in order, and what dies is spread over them (overwrites, windows,
// expired entries), so a try over new keys stops after a few thousand
// keys instead of copying a quarter of the write buffer.
bool LikelyOverRoom(size_t bytes, size_t room, uint64_t read, uint64_t total) {
  if (read < 4096 || total == 0) return false;
  const double share = static_cast<double>(read) / static_cast<double>(total);
  return static_cast<double>(bytes) > 2.0 * static_cast<double>(room) * share + (64 << 10);
}

}  // namespace

struct DBImpl::FlushJob {
  uint32_t cf;
  std::shared_ptr<MemTable> imm;       // null: only the resident one goes to files
  std::shared_ptr<MemTable> resident;  // null if none
  ColumnFamilyOptions options;
  uint64_t tombstone_time;  // imm's (a resident memtable holds none)
  std::shared_ptr<const ColumnFamilyFiles> files;
  bool try_in_memory;
  bool requested;  // by Flush (a caller waits for it), not by a full memtable
  double last_survivor_fraction;  // the family's, from its last flush
  // Outcome: kept in memory (kept then holds the survivors, or is null when
  // none survived), or written to files; and how many entries survived.
  bool in_memory = false;
  std::shared_ptr<MemTable> kept;
  uint64_t survivors = 0;

  uint64_t InputEntries() const {
    return (imm != nullptr ? imm->num_entries() : 0) + (resident != nullptr ? resident->num_entries() : 0);
  }
  // The memtables' sort keys (a key in both counts twice).
  uint64_t InputKeys() const {
    return (imm != nullptr ? imm->num_keys() : 0) + (resident != nullptr ? resident->num_keys() : 0);
  }
  size_t InputBytes() const {
    return (imm != nullptr ? imm->ApproximateMemoryUsage() : 0) +
           (resident != nullptr ? resident->ApproximateMemoryUsage() : 0);
  }
  // A memtable for a compaction in memory: small arena blocks when few
  // entries survived the family's last flush, and no key filter until the
  // survivors are counted.
  std::shared_ptr<MemTable> NewSurvivorTable() const {
    const double bytes = last_survivor_fraction * static_cast<double>(InputBytes());
    const size_t block = std::clamp<size_t>(static_cast<size_t>(bytes) + 1024, 4096, Arena::kBlockSize);
    return std::make_shared<MemTable>(0, block);
  }

  // The memtables' entries merged. Without snapshots only the versions the
  // latest state needs: a key updated many times in memory then costs a
  // flush a seek past its older versions, not a step over each.
  std::unique_ptr<InternalIterator> NewInput(bool snapshots) const {
    std::vector<std::unique_ptr<InternalIterator>> iters;
    for (const auto& m : {imm, resident}) {
      if (m == nullptr) continue;
      iters.push_back(snapshots ? m->NewIterator() : NewVisibleVersionsIterator(m->NewIterator(), kMaxSequenceNumber));
    }
    return NewMergingIterator(std::move(iters));
  }
  // Whether a file may hold an older version of a key: a point tombstone whose key no file can
  // hold deletes only what the memtables hold, and need not reach disk (a state cleared while
  // its data was still in memory). Files only ever gain keys by flushes, which run one at a
  // time, so the files seen now cover everything below this flush (a resident memtable too).
  // Only tables open now are asked: opening others here, for every such key, would hold the
  // flush up while writers wait for it; a file that is not asked may hold the key, which keeps
  // its entries as they are. Range tombstones are kept.
  std::function<bool(std::string_view, std::string_view)> DeeperData(DBImpl* db) const {
    return [db, files = files](std::string_view lo, std::string_view hi) {
      if (files == nullptr) return false;
      return lo != hi || db->FilesMayContain(*files, lo, TableOpen::kNever);
    };
  }
  std::vector<RangeTombstone> RangeTombstones() const {
    std::vector<RangeTombstone> all;
    for (const auto& m : {imm, resident}) {
      if (m == nullptr) continue;
      std::vector<RangeTombstone> t = m->RangeTombstones();
      all.insert(all.end(), t.begin(), t.end());
    }
    return all;
  }
};

// Whether a family's flush tries to compact in memory: not while it backs
// off after a failed try, and only if what survived its last flush, in
// proportion, would fit the room now; every 8th flush tries anyway, so that a
// workload that starts deleting (windows firing after a fill) is noticed. A
// failed try costs a pass over part of the input, and a flush holds writers
// up once the next memtable fills: writing new keys only (nothing survives
// less than all), trying each time cost 15 % of the insert rate.
bool DBImpl::WorthCompactingInMemory(const ColumnFamilyData& cfd, const FlushJob& job, size_t room) {
  if (cfd.in_memory_skips > 0) return false;
  if (cfd.flushes_since_in_memory_try >= 8) return true;
  return cfd.survivor_fraction * static_cast<double>(job.InputBytes()) <= static_cast<double>(room);
}

std::vector<DBImpl::FlushJob> DBImpl::CollectFlushJobs(bool to_files, size_t room) {
  std::vector<FlushJob> jobs;
  // A copy waits for this flush: it writes what the copy's files would show.
  VersionRef version = flush_view_ != nullptr ? std::move(flush_view_) : versions_->current();
  flush_view_.reset();
  for (auto& [id, cfd] : cfds_) {
    if (cfd->imm == nullptr && !(to_files && cfd->resident != nullptr)) continue;
    FlushJob job;
    job.cf = id;
    job.imm = cfd->imm;
    job.resident = cfd->resident;
    job.options = cfd->options;
    job.options.pages_per_tile = TileSizeFor(*cfd);
    job.tombstone_time = cfd->imm != nullptr ? cfd->imm_first_tombstone_time_us : 0;
    job.files = version->cfs.count(id) ? version->cfs.at(id) : nullptr;
    job.try_in_memory = !to_files && cfd->imm != nullptr && WorthCompactingInMemory(*cfd, job, room);
    job.requested = imm_awaited_;
    job.last_survivor_fraction = cfd->survivor_fraction;
    if (!to_files && cfd->in_memory_skips > 0) cfd->in_memory_skips--;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

size_t DBImpl::InMemoryRoom() {
  if (options_.use_wal || !options_.compact_in_memory) return 0;
  return std::min(options_.write_buffer_size / 4, budget_->ResidentRoom(*write_share_));
}

// Writes every column family's immutable memtable (with its resident one) to
// a level-0 file, or keeps what survives in memory, and installs them in one
// version edit, which also retires the old WALs.
Status DBImpl::FlushImmutable(std::unique_lock<std::mutex>& l) {
  std::vector<SequenceNumber> snapshots = SnapshotList();
  const size_t room_now = InMemoryRoom();
  const bool to_files = imm_to_files_ || room_now == 0;
  size_t room = to_files ? 0 : room_now;  // shrinks as families keep residents
  std::vector<FlushJob> jobs = CollectFlushJobs(to_files, room);
  uint64_t log_number = imm_log_number_;
  VersionRef version = versions_->current();
  l.unlock();

  VersionEdit edit;
  std::vector<FileMetaData> outputs;
  Status s;
  for (FlushJob& job : jobs) {
    if (job.try_in_memory) {
      s = CompactInMemory(&job, snapshots, room);
      if (!s.ok()) break;
      if (job.in_memory) {
        room -= std::min(room, job.kept != nullptr ? job.kept->ApproximateMemoryUsage() : 0);
        continue;
      }
    }
    s = FlushToTables(job, snapshots, &edit, &outputs);
    if (!s.ok()) break;
  }

  // New table files must be reachable by name after a crash before the
  // manifest points at them.
  if (s.ok() && !outputs.empty()) s = env_->SyncDir(dbname_);
  KillPoint("flush.before_manifest");
  l.lock();
  if (s.ok() && (!outputs.empty() || log_number != 0)) {
    // Families dropped while flushing: their outputs are simply not added.
    std::erase_if(edit.new_files_, [this](const VersionEdit::NewFile& n) { return cfds_.count(n.cf) == 0; });
    if (log_number != 0) edit.SetLogNumber(log_number, options_.use_wal);
    versions_->SetLastSequence(last_sequence_.load());
    s = LogAndApply(&edit);
  }
  if (!s.ok() && versions_->manifest_failed()) return s;  // outputs stay pending: the edit may be durable
  ReleasePendingOutputs(outputs);
  if (!s.ok()) return s;
  InstallFlushed(jobs);
  HandFlushToCopies(edit);
  imm_pending_ = false;
  imm_to_files_ = false;
  imm_awaited_ = false;
  NoteFlushAwaited();
  if (to_files) checkpoint_image_bytes_ = 0;  // what checkpoints copied is in files now
  HandOverCharge(std::move(jobs));
  KillPoint("flush.installed");
  Record(Ticker::kFlushes, 1);
  version.reset();  // files replaced meanwhile go now
  DeleteObsoleteFiles(l);
  bg_cv_.notify_all();
  return TidySecondaryDeletes();
}

// Runs the flush's rewrite rules into a new memtable. Gives up (job->in_memory
// stays false) once the survivors outgrow `room` or include a tombstone.
// Survivors go straight into the memtable that keeps them: gathering them in
// a vector first took a multi-MiB buffer per flush, grown by doubling, that
// the background thread freed into malloc's heap.
Status DBImpl::CompactInMemory(FlushJob* job, const std::vector<SequenceNumber>& snapshots, size_t room) {
  std::unique_ptr<InternalIterator> input = job->NewInput(!snapshots.empty());
  const SecondaryDeletes* secondary = job->files != nullptr ? &job->files->secondary : nullptr;
  CompactionStream stream(input.get(), job->RangeTombstones(), snapshots, job->DeeperData(this), secondary);
  std::shared_ptr<MemTable> kept = job->NewSurvivorTable();
  std::vector<OutputEntry> key;
  size_t bytes = 0;
  const uint64_t input_keys = job->InputKeys();
  for (uint64_t keys_read = 1; stream.NextKey(&key); keys_read++) {
    for (const OutputEntry& e : key) {
      const uint64_t tag = ExtractTag(e.ikey);
      if (TagKind(tag) == EntryKind::kTombstone) return Status::OK();
      bytes += MemTableEntryBytes(e);
      kept->Add(TagSequence(tag), TagKind(tag), ExtractSortKey(e.ikey), e.value, e.delete_key);
    }
    key.clear();
    if (bytes > room || LikelyOverRoom(bytes, room, keys_read, input_keys)) return Status::OK();
  }
  if (!stream.status().ok()) return stream.status();
  if (!stream.OutputTombstones().empty()) return Status::OK();
  if (!kept->empty()) {
    kept->AddKeyFilter();
    // The arena's blocks and the filter may take more than the estimate.
    if (kept->ApproximateMemoryUsage() > room) return Status::OK();
    job->survivors = kept->num_entries();
    job->kept = std::move(kept);
  }
  job->in_memory = true;
  Record(Ticker::kInMemoryCompactions, 1);
  Record(Ticker::kSecondaryBytesCompacted, stream.stats().secondary_removed_bytes);
  return Status::OK();
}

Status DBImpl::FlushToTables(FlushJob& job, const std::vector<SequenceNumber>& snapshots, VersionEdit* edit,
                             std::vector<FileMetaData>* outputs) {
  std::unique_ptr<InternalIterator> input = job.NewInput(!snapshots.empty());
  const SecondaryDeletes* secondary = job.files != nullptr ? &job.files->secondary : nullptr;
  CompactionStream stream(input.get(), job.RangeTombstones(), snapshots, job.DeeperData(this), secondary);
  TableWriterOptions wo;
  wo.dbname = dbname_;
  wo.env = env_;
  wo.cf_options = job.options;
  // A time-ordered family's flush writes a file that stays as it is, in the
  // codec of files that stay; unless a checkpoint waits for it (its young
  // file takes that codec when it merges with its neighbours).
  wo.bottommost = job.options.compaction_style == CompactionStyle::kTimeOrdered && !job.requested;
  wo.flush = true;
  wo.now_us = clock_->NowMicros();
  wo.oldest_tombstone_time_us = job.tombstone_time;
  wo.secondary_applied_seq = SecondaryAppliedSeq(secondary, snapshots);
  wo.estimate_covered = CoveredEntriesEstimate(job.files, 0);
  wo.new_file_number = [this] { return NewPendingFileNumber(); };
  TableWriterResult result;
  Status s = WriteTables(wo, &stream, &result);
  if (!s.ok()) return s;
  KillPoint("flush.tables_written");
  Record(Ticker::kBytesWrittenFlush, result.bytes_written);
  Record(Ticker::kSecondaryBytesCompacted, stream.stats().secondary_removed_bytes);
  for (FileMetaData& f : result.files) {
    job.survivors += f.num_entries;
    edit->AddFile(job.cf, 0, f);
    outputs->push_back(std::move(f));
  }
  return Status::OK();
}

// The flushed memtables stay charged until they are destroyed. Those no
// reader holds go here, before the flush is counted: who sees it counted sees
// their bytes given back.
void DBImpl::HandOverCharge(std::vector<FlushJob> jobs) {
  std::shared_ptr<void> charge = write_share_->Flushed(resident_bytes_);
  for (FlushJob& job : jobs) {
    for (const auto& m : {job.imm, job.resident}) {
      if (m != nullptr) m->HoldUntilFreed(charge);
    }
  }
}

void DBImpl::InstallFlushed(std::vector<FlushJob>& jobs) {
  for (FlushJob& job : jobs) {
    auto it = cfds_.find(job.cf);
    if (it == cfds_.end()) continue;  // dropped meanwhile
    ColumnFamilyData* cfd = it->second.get();
    if (job.imm != nullptr) {
      cfd->imm.reset();
      cfd->imm_first_tombstone_time_us = 0;
    }
    cfd->resident = std::move(job.kept);
    const uint64_t input = job.InputEntries();
    if (input > 0) cfd->survivor_fraction = static_cast<double>(job.survivors) / static_cast<double>(input);
    cfd->flushes_since_in_memory_try = job.try_in_memory ? 0 : cfd->flushes_since_in_memory_try + 1;
    if (job.in_memory) {
      cfd->in_memory_backoff = 0;
    } else if (job.try_in_memory) {
      cfd->in_memory_backoff = std::min(4, std::max(1, cfd->in_memory_backoff * 2));
      cfd->in_memory_skips = cfd->in_memory_backoff;
    }
  }
  resident_bytes_ = 0;
  for (auto& [id, cfd] : cfds_) {
    if (cfd->resident != nullptr) resident_bytes_ += cfd->resident->ApproximateMemoryUsage();
    InstallSuperVersion(cfd.get());
  }
}

}  // namespace lethe
