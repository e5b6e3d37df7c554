// DBImpl: secondary deletes by delete key (KiWi): the records,
// page drops as manifest edits (planned by page_drop_planner.h, carried out
// by page_drop_job.h), and hole punching for the local copy.
#include <algorithm>

#include "compaction/fade.h"
#include "compaction/page_drop_job.h"
#include "compaction/page_drop_planner.h"
#include "compaction/tile_size.h"
#include "db/db_impl.h"
#include "util/kill_point.h"

namespace lethe {

Status DBImpl::DeleteByDeleteKey(ColumnFamilyHandle* cf, uint64_t lo, uint64_t hi) {
  if (lo > hi) return Status::InvalidArgument("delete by delete key: lo must not exceed hi");
  if (lo == kMaxDeleteKey) return Status::OK();  // kMaxDeleteKey is never deleted
  hi = std::min(hi, kMaxDeleteKey - 1);
  return AddSecondaryRecord(cf, [lo, hi](SecondaryDeletes* r, SequenceNumber seq, uint64_t now) {
    r->ranges.push_back(DeleteKeyRangeRecord{seq, lo, hi, now});
    return true;
  });
}

Status DBImpl::AdvanceHorizon(ColumnFamilyHandle* cf, uint64_t horizon) {
  return AddSecondaryRecord(cf, [horizon](SecondaryDeletes* r, SequenceNumber seq, uint64_t now) {
    if (horizon <= r->horizon()) return false;  // horizons never move back
    r->horizons.push_back(HorizonRecord{seq, horizon, now});
    return true;
  });
}

Status DBImpl::GetHorizon(ColumnFamilyHandle* cf, uint64_t* horizon) {
  if (horizon == nullptr) return Status::InvalidArgument("null horizon pointer");
  std::lock_guard<std::mutex> l(mu_);
  Status s;
  ColumnFamilyData* cfd = Resolve(cf, &s);
  if (cfd == nullptr) return s;
  *horizon = cfd->super_version->files->secondary.horizon();
  return Status::OK();
}

Status DBImpl::AddSecondaryRecord(
    ColumnFamilyHandle* cf, const std::function<bool(SecondaryDeletes*, SequenceNumber, uint64_t)>& add) {
  // The writer lock: the record takes the next sequence number, which no
  // write may take concurrently.
  std::lock_guard<std::mutex> w(write_mu_);
  std::lock_guard<std::mutex> l(mu_);
  Status s;
  ColumnFamilyData* cfd = Resolve(cf, &s);
  if (cfd == nullptr) return s;
  if (!bg_error_.ok()) return bg_error_;
  const ColumnFamilyFiles* files = versions_->current()->Find(cfd->id);
  if (files == nullptr) return Status::InvalidArgument("column family has no files entry", cfd->name);
  const SequenceNumber seq = last_sequence_.load(std::memory_order_relaxed) + 1;
  const uint64_t now = clock_->NowMicros();
  SecondaryDeletes records = files->secondary;
  if (!add(&records, seq, now)) return Status::OK();
  // Coalesce the new horizon with the previous one when no snapshot reads
  // between them and (with FADE on) the previous one is recent: the merged
  // record keeps the earlier time, so FADE may only act early, never late.
  auto& h = records.horizons;
  if (h.size() >= 2 && h.back().seq == seq) {
    const HorizonRecord& prev = h[h.size() - 2];
    const uint64_t window = FadeHorizonCoalesceWindowUs(cfd->options);
    if (!AnySnapshotIn(snapshots_, prev.seq, seq) && now - std::min(now, prev.time_us) < window) {
      HorizonRecord merged{seq, h.back().horizon, prev.time_us};
      h.pop_back();
      h.back() = merged;
    }
  }
  if (!records.horizons.empty() && records.horizons.back().seq == seq) {
    cfd->horizon_moved_before_us = cfd->horizon_moved_us;
    cfd->horizon_moved_us = now;
  }
  VersionEdit edit;
  edit.SetSecondaryDeletes(cfd->id, std::move(records));
  versions_->SetLastSequence(seq);
  s = LogAndApply(&edit);
  if (!s.ok()) return s;
  InstallSuperVersion(cfd);
  // After the records: a reader loads the sequence first, so whatever
  // sequence it sees, its super version holds the records up to it.
  last_sequence_.store(seq, std::memory_order_release);
  Record(Ticker::kSecondaryDeletes, 1);
  cfd->secondary_deletes.fetch_add(1, std::memory_order_relaxed);
  page_drops_pending_ = true;
  bg_cv_.notify_all();
  return Status::OK();
}

int DBImpl::TileSizeFor(const ColumnFamilyData& cfd) {
  if (cfd.options.pages_per_tile != kPagesPerTileAuto) return cfd.options.pages_per_tile;
  const ColumnFamilyFiles* files = versions_->current()->Find(cfd.id);
  uint64_t bytes = 0;
  int levels = 1;
  if (files != nullptr) {
    for (int l = 0; l < kNumLevels; l++) bytes += files->LevelBytes(l);
    levels = std::max(1, files->DeepestNonEmptyLevel() + 1);
  }
  const uint64_t pages = bytes / std::max<size_t>(1, cfd.options.page_size);
  return AutoTileSize(pages, cfd.super_versions.PointLookups(), cfd.super_versions.RangeLookups(),
                      cfd.secondary_deletes.load(std::memory_order_relaxed),
                      BloomFalsePositiveRate(cfd.options.bloom_bits_per_key), levels);
}

SequenceNumber DBImpl::OldestUnflushedSequence(const ColumnFamilyData* cfd) {
  SequenceNumber oldest = kMaxSequenceNumber;
  for (const MemTable* m : cfd->memtables()) {
    if (m != nullptr && m->first_sequence() != 0) oldest = std::min(oldest, m->first_sequence());
  }
  return oldest;
}

Status DBImpl::TidySecondaryDeletes() {
  VersionEdit edit;
  bool changed = false;
  for (auto& [id, cfd] : cfds_) {
    const ColumnFamilyFiles* files = versions_->current()->Find(id);
    if (files == nullptr || files->secondary.empty()) continue;
    const SecondaryDeletes& old = files->secondary;
    SecondaryDeletes tidy;
    // A horizon record other than the last matters to snapshots reading
    // before the next one, and to FADE while a file's smallest delete key
    // lies between it and the previous horizon (its time is that file's
    // invalidation time).
    for (size_t i = 0; i < old.horizons.size(); i++) {
      const HorizonRecord& r = old.horizons[i];
      bool keep = i + 1 == old.horizons.size() || AnySnapshotIn(snapshots_, r.seq, old.horizons[i + 1].seq);
      const uint64_t below = tidy.horizons.empty() ? 0 : tidy.horizons.back().horizon;
      for (int level = 0; level < kNumLevels && !keep; level++) {
        for (const FileRef& f : files->levels[level]) {
          if (f->delete_key_min >= below && f->delete_key_min < r.horizon) {
            keep = true;
            break;
          }
        }
      }
      if (keep) tidy.horizons.push_back(r);
    }
    // A delete-key range matters while an entry written before it with a
    // delete key in the range may still exist, in a file or a memtable.
    const SequenceNumber unflushed = OldestUnflushedSequence(cfd.get());
    for (const DeleteKeyRangeRecord& r : old.ranges) {
      bool keep = unflushed < r.seq;
      for (int level = 0; level < kNumLevels && !keep; level++) {
        for (const FileRef& f : files->levels[level]) {
          if (f->smallest_seq < r.seq && f->delete_key_min <= r.hi && r.lo <= f->delete_key_max) {
            keep = true;
            break;
          }
        }
      }
      if (keep) tidy.ranges.push_back(r);
    }
    if (tidy.horizons.size() != old.horizons.size() || tidy.ranges.size() != old.ranges.size()) {
      edit.SetSecondaryDeletes(id, std::move(tidy));
      changed = true;
    }
  }
  if (!changed) return Status::OK();
  versions_->SetLastSequence(last_sequence_.load());
  Status s = LogAndApply(&edit);
  if (!s.ok()) return s;
  InstallSuperVersions();
  return Status::OK();
}

// One file that secondary deletes may touch, found under mu_.
struct DBImpl::PageDropCandidate {
  uint32_t cf;
  int level;
  FileRef file;
  ColumnFamilyOptions options;
  bool horizon_moving;
};

// What a page drop changes in one file, ready for the version edit.
struct DBImpl::PageDropChange {
  uint32_t cf;
  int level;
  FileRef before;
  PageDropResult result;
};

std::vector<DBImpl::PageDropCandidate> DBImpl::PageDropCandidates(const Version& version, uint64_t now) {
  std::vector<PageDropCandidate> candidates;
  for (const auto& [id, files] : version.cfs) {
    auto cfd = cfds_.find(id);
    if (files->secondary.empty() || cfd == cfds_.end()) continue;
    const ColumnFamilyData& c = *cfd->second;
    const bool moving = FadeHorizonMoving(c.options, c.horizon_moved_before_us, c.horizon_moved_us, now);
    for (int level = 0; level < kNumLevels; level++) {
      for (const FileRef& f : files->levels[level]) {
        if (RecordsMayTouch(files->secondary, *f)) candidates.push_back({id, level, f, c.options, moving});
      }
    }
  }
  return candidates;
}

Status DBImpl::PlanAndDropPages(const Version& version, const PageDropCandidate& c,
                                const std::multiset<SequenceNumber>& snapshots, uint64_t now,
                                PageDropPlan* plan, PageDropResult* result) {
  const ColumnFamilyFiles& files = *version.cfs.at(c.cf);
  FileTables tables;
  Status s = OpenFileTables(table_cache_.get(), c.file, &tables);
  if (!s.ok()) return s;
  PageDropJobOptions jo;
  jo.dbname = dbname_;
  jo.env = env_;
  jo.tables = table_cache_.get();
  jo.bloom_bits_per_key = c.options.bloom_bits_per_key;
  jo.compression = c.options.compression;
  jo.now_us = now;
  jo.new_file_number = [this] { return NewPendingFileNumber(); };
  PageDropJob job(std::move(jo), std::move(tables));
  PageDropInput in;
  s = job.Tiles(&in.tiles);
  if (!s.ok()) return s;
  in.file = c.file.get();
  in.records = &files.secondary;
  in.snapshots = &snapshots;
  in.options = c.options;
  in.now_us = now;
  in.horizon_moving = c.horizon_moving;
  in.older_versions = [&](std::string_view lo, std::string_view hi) {
    return files.OlderOverlap(c.level, c.file, lo, hi);
  };
  *plan = PlanPageDrops(in);
  if (CompactAlone(c, *plan)) return Status::OK();
  return job.Run(*plan, files.secondary, snapshots, result);
}

bool DBImpl::CompactAlone(const PageDropCandidate& c, const PageDropPlan& plan) {
  return plan.rewrite_file && c.level > 0;
}

Status DBImpl::CompactFilesAlone(std::unique_lock<std::mutex>& l, const std::vector<PageDropCandidate>& files) {
  for (const PageDropCandidate& c : files) {
    auto cfd = cfds_.find(c.cf);
    if (cfd == cfds_.end()) continue;  // dropped meanwhile
    const std::vector<FileRef>& level = versions_->current()->cfs.at(c.cf)->levels[c.level];
    if (std::find(level.begin(), level.end(), c.file) == level.end()) continue;
    CompactionPlan plan;
    plan.level = plan.output_level = c.level;
    plan.inputs[0] = {c.file};
    plan.reason = CompactionReason::kPageRewrite;
    plan.allow_trivial_move = false;
    if (Status s = RunCompaction(l, cfd->second.get(), plan); !s.ok()) return s;
  }
  return Status::OK();
}

Status DBImpl::DropCoveredPages(std::unique_lock<std::mutex>& l) {
  page_drops_pending_ = false;
  page_drops_deferred_ = false;
  VersionRef version = versions_->current();
  const std::multiset<SequenceNumber> snapshots = snapshots_;
  const uint64_t now = clock_->NowMicros();
  const std::vector<PageDropCandidate> candidates = PageDropCandidates(*version, now);
  if (candidates.empty()) return Status::OK();
  l.unlock();

  std::vector<PageDropChange> changes;
  std::vector<PageDropCandidate> alone;  // to compact alone instead
  std::vector<FileMetaData> new_patches;  // pending outputs
  PageDropCounts counts;
  bool deferred = false;
  Status s;
  for (const PageDropCandidate& c : candidates) {
    PageDropPlan plan;
    PageDropChange change{c.cf, c.level, c.file, {}};
    s = PlanAndDropPages(*version, c, snapshots, now, &plan, &change.result);
    if (change.result.new_patch != 0) {
      new_patches.emplace_back();
      new_patches.back().number = change.result.new_patch;
    }
    if (!s.ok()) break;
    counts.partly_covered += plan.partly_covered;
    deferred = deferred || plan.deferred;
    if (CompactAlone(c, plan)) alone.push_back(c);
    if (!change.result.changed) continue;
    counts.Add(plan, change.result);
    changes.push_back(std::move(change));
  }
  ticker(Ticker::kPartiallyCoveredPages).store(counts.partly_covered, std::memory_order_relaxed);
  if (s.ok() && !new_patches.empty()) s = env_->SyncDir(dbname_);
  if (s.ok() && !new_patches.empty()) KillPoint("page_drop.patches_written");

  l.lock();
  page_drops_deferred_ = page_drops_deferred_ || deferred;
  ReleasePendingOutputs(new_patches);
  if (s.ok()) s = InstallPageDrops(changes, counts);
  if (!s.ok() || changes.empty()) DiscardPatches(new_patches);
  if (s.ok()) s = CompactFilesAlone(l, alone);
  return s;
}

Status DBImpl::InstallPageDrops(std::vector<PageDropChange>& changes, const PageDropCounts& counts) {
  VersionEdit edit;
  bool any = false;
  for (const PageDropChange& ch : changes) {
    if (cfds_.count(ch.cf) == 0) continue;  // dropped meanwhile
    edit.DeleteFile(ch.cf, ch.level, ch.before->number);
    if (!ch.result.whole_file) edit.AddFile(ch.cf, ch.level, ch.result.after);
    any = true;
  }
  if (!any) {
    changes.clear();
    return Status::OK();
  }
  versions_->SetLastSequence(last_sequence_.load());
  Status s = LogAndApply(&edit);
  if (!s.ok()) return s;
  KillPoint("page_drop.applied");
  InstallSuperVersions();
  for (PageDropChange& ch : changes) {
    if (cfds_.count(ch.cf) == 0) continue;
    if (ch.result.whole_file) {
      Record(Ticker::kFilesDropped, 1);
    } else if (ch.result.replaced_by_patch) {
      Record(Ticker::kFilesReplacedByPatch, 1);
    } else if (!ch.result.extents.empty()) {
      pending_punches_.push_back(
          PendingPunch{ch.before->number, std::move(ch.result.extents), std::move(ch.result.freed_pages), ch.before});
    }
  }
  Record(Ticker::kPagesDropped, counts.pages_dropped);
  Record(Ticker::kPageBytesDropped, counts.page_bytes_dropped);
  Record(Ticker::kPagesRewritten, counts.pages_rewritten);
  Record(Ticker::kRewriteBytesRead, counts.rewrite_bytes_read);
  Record(Ticker::kRewriteBytesWritten, counts.rewrite_bytes_written);
  return Status::OK();
}

void DBImpl::DiscardPatches(const std::vector<FileMetaData>& patches) {
  if (versions_->manifest_failed()) {
    // The edit naming them may be durable: keep them, pending, for good.
    for (const FileMetaData& p : patches) pending_outputs_.insert(p.number);
    return;
  }
  for (const FileMetaData& p : patches) env_->RemoveFile(TableFileName(dbname_, p.number));
}

std::vector<DBImpl::Punch> DBImpl::TakeDuePunches() {
  std::vector<Punch> due;
  if (pending_punches_.empty()) return due;
  std::set<uint64_t> current;
  for (const auto& [id, files] : versions_->current()->cfs) {
    for (int l = 0; l < kNumLevels; l++) {
      for (const FileRef& f : files->levels[l]) current.insert(f->number);
    }
  }
  std::vector<PendingPunch> waiting;
  for (PendingPunch& p : pending_punches_) {
    if (current.count(p.file_number) == 0) continue;  // the file goes away whole
    // A reader may still read these pages: one holding the record the drop
    // replaced, or a version whose record of the file predates even that one.
    // (Readers that start later read the current record, which drops them.)
    if (!p.before.expired() || versions_->AnyLiveRecordReads(p.file_number, p.pages)) {
      waiting.push_back(std::move(p));
      continue;
    }
    std::string fname = TableFileName(dbname_, p.file_number);
    uint64_t links = 0;
    if (!env_->GetLinkCount(fname, &links).ok()) continue;
    if (links > 1) {
      // A checkpoint taken before the drop shares the file (hard link): its
      // copy must stay whole. Retried later, when the checkpoint directory
      // may be gone. (A checkpoint taken later names the current record.)
      waiting.push_back(std::move(p));
      continue;
    }
    due.push_back(Punch{std::move(fname), std::move(p.extents)});
  }
  pending_punches_ = std::move(waiting);
  return due;
}

// Pending punches end with the process, and a file restored from a
// checkpoint or copied has its bytes back, the holes written as zeros: the
// pages its record no longer reads would stay allocated until a compaction.
// Punching an existing hole again frees nothing. A file whose index cannot
// be read is left as it is: its reads report the damage.
void DBImpl::QueueUnreadPagePunches() {
  for (const auto& [id, files] : versions_->current()->cfs) {
    for (int level = 0; level < kNumLevels; level++) {
      for (const FileRef& f : files->levels[level]) {
        if (f->dropped_pages.empty() && f->patched_pages.empty()) continue;
        PendingPunch p{f->number, {}, {}, {}};
        if (UnreadPageExtents(*f, &p).ok() && !p.extents.empty()) pending_punches_.push_back(std::move(p));
      }
    }
  }
}

Status DBImpl::UnreadPageExtents(const FileMetaData& f, PendingPunch* p) {
  FileReaders t;
  std::vector<PartitionRef> partitions;
  Status s = OpenFileReaders(table_cache_.get(), f, &t);
  if (s.ok()) s = t.table->ReadPartitions(&partitions);
  if (!s.ok()) return s;
  for (const PartitionRef& part : partitions) {
    for (const PageMeta& page : part->pages()) {
      if (f.ReadsPageFromFile(page.index)) continue;
      p->pages.push_back(page.index);
      AppendPageExtent(page, &p->extents);
    }
  }
  return Status::OK();
}

void DBImpl::PunchHoles(const std::vector<Punch>& punches) {
  for (const Punch& p : punches) {
    for (const auto& [offset, len] : p.extents) {
      uint64_t freed = 0;
      if (!env_->PunchHole(p.fname, offset, len, &freed).ok()) break;  // NotSupported or an error: the space stays used, nothing is lost
      KillPoint("page_drop.punching");
      Record(Ticker::kBytesPunched, freed);
    }
  }
}

}  // namespace lethe
