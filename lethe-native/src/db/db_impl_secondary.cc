// DBImpl: secondary deletes by delete key (KiWi, paper §4.2): the records,
// page drops as manifest edits, and hole punching for the local copy.
#include <algorithm>

#include "compaction/fade.h"
#include "compaction/tile_size.h"
#include "db/db_impl.h"
#include "sst/table_reader.h"

namespace lethe {

namespace {

// Whether a snapshot lies in [lo, hi).
bool SnapshotIn(const std::multiset<SequenceNumber>& snapshots, SequenceNumber lo, SequenceNumber hi) {
  auto it = snapshots.lower_bound(lo);
  return it != snapshots.end() && *it < hi;
}

}  // namespace

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
    const uint64_t window = cfd->options.delete_persistence_threshold_us == 0
                                ? UINT64_MAX
                                : FadeCheckPeriodUs(cfd->options);
    if (!SnapshotIn(snapshots_, prev.seq, seq) && now - std::min(now, prev.time_us) < window) {
      HorizonRecord merged{seq, h.back().horizon, prev.time_us};
      h.pop_back();
      h.back() = merged;
    }
  }
  VersionEdit edit;
  edit.SetSecondaryDeletes(cfd->id, std::move(records));
  versions_->SetLastSequence(seq);
  s = versions_->LogAndApply(&edit);
  if (!s.ok()) return s;
  InstallSuperVersion(cfd);
  // Published together with the records (readers load both under mu_).
  last_sequence_.store(seq, std::memory_order_release);
  stat_secondary_records_.fetch_add(1, std::memory_order_relaxed);
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
  return AutoTileSize(pages, cfd.point_lookups.load(std::memory_order_relaxed),
                      cfd.range_lookups.load(std::memory_order_relaxed),
                      cfd.secondary_deletes.load(std::memory_order_relaxed),
                      BloomFalsePositiveRate(cfd.options.bloom_bits_per_key), levels);
}

SequenceNumber DBImpl::OldestUnflushedSequence(const ColumnFamilyData* cfd) {
  SequenceNumber oldest = kMaxSequenceNumber;
  for (const MemTable* m : {cfd->mem.get(), cfd->imm.get()}) {
    if (m != nullptr && m->first_sequence() != 0) oldest = std::min(oldest, m->first_sequence());
  }
  return oldest;
}

Status DBImpl::TidySecondaryDeletes() {
  VersionEdit edit;
  std::vector<ColumnFamilyData*> changed;
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
      bool keep = i + 1 == old.horizons.size() || SnapshotIn(snapshots_, r.seq, old.horizons[i + 1].seq);
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
      changed.push_back(cfd.get());
    }
  }
  if (changed.empty()) return Status::OK();
  versions_->SetLastSequence(last_sequence_.load());
  Status s = versions_->LogAndApply(&edit);
  if (!s.ok()) return s;
  for (ColumnFamilyData* cfd : changed) InstallSuperVersion(cfd);
  return Status::OK();
}

Status DBImpl::DropCoveredPages(std::unique_lock<std::mutex>& l) {
  page_drops_pending_ = false;
  VersionRef version = versions_->current();
  const std::multiset<SequenceNumber> snapshots = snapshots_;
  struct Candidate {
    uint32_t cf;
    int level;
    FileRef file;
  };
  std::vector<Candidate> candidates;
  for (const auto& [id, files] : version->cfs) {
    const SecondaryDeletes& sd = files->secondary;
    if (sd.empty()) continue;
    for (int level = 0; level < kNumLevels; level++) {
      for (const FileRef& f : files->levels[level]) {
        bool maybe = f->delete_key_min < sd.horizon();
        for (const DeleteKeyRangeRecord& r : sd.ranges) {
          maybe = maybe || (f->largest_seq < r.seq && r.lo <= f->delete_key_max && f->delete_key_min <= r.hi);
        }
        if (maybe) candidates.push_back(Candidate{id, level, f});
      }
    }
  }
  if (candidates.empty()) return Status::OK();
  l.unlock();

  // Only the indexes are consulted (held in memory by the table cache): no
  // page is read.
  struct Drop {
    uint32_t cf;
    int level;
    FileRef before;
    FileMetaData after;
    bool whole_file;
    std::vector<std::pair<uint64_t, uint64_t>> extents;
  };
  std::vector<Drop> drops;
  uint64_t partial = 0, pages = 0, bytes = 0;
  Status s;
  for (const Candidate& c : candidates) {
    const ColumnFamilyFiles& files = *version->cfs.at(c.cf);
    const SecondaryDeletes& sd = files.secondary;
    const FileMetaData& f = *c.file;
    std::shared_ptr<const TableReader> table;
    s = table_cache_->FindTable(f, &table);
    if (!s.ok()) break;
    // Whether entries older than `f` of keys in [lo, hi] may exist: then a
    // delete-key range (unlike a horizon) must leave a tombstone behind.
    auto older_data = [&](std::string_view lo, std::string_view hi) {
      if (c.level == 0) {
        bool after = false;
        for (const FileRef& o : files.levels[0]) {
          if (after && o->Overlaps(lo, hi)) return true;
          after = after || o == c.file;
        }
      }
      return files.DeeperOverlap(c.level, lo, hi);
    };
    Drop d{c.cf, c.level, c.file, f, false, {}};
    d.after.delete_key_min = kMaxDeleteKey;
    d.after.delete_key_max = 0;
    std::vector<uint32_t> dropped = f.dropped_pages;
    uint64_t remaining = 0;
    for (const TileMeta& tile : table->tiles()) {
      // Per remaining page: whether a horizon or a delete-key range covers all
      // its entries for every reader. A horizon's page drops alone: older
      // versions of its keys, wherever they are, lie under the horizon too
      // (monotone delete keys). A range's page drops only with every other
      // remaining page of its tile (an older version of one of its keys may
      // sit in a sibling page, with a delete key below the range) and only
      // when no older file may hold its keys.
      struct Cover {
        const PageMeta* page;
        bool by_horizon, by_range;
      };
      std::vector<Cover> covers;
      bool tile_covered = true;
      for (const PageMeta& p : tile.pages) {
        if (f.PageDropped(p.index)) continue;
        Cover cover{&p, false, false};
        if (p.delete_key_max < sd.horizon()) {
          const SequenceNumber from = sd.HorizonHiddenFrom(p.delete_key_max);
          cover.by_horizon = !SnapshotIn(snapshots, f.smallest_seq, from);
        }
        for (const DeleteKeyRangeRecord& r : sd.ranges) {
          if (!cover.by_range && f.largest_seq < r.seq && r.lo <= p.delete_key_min && p.delete_key_max <= r.hi &&
              !SnapshotIn(snapshots, f.smallest_seq, r.seq)) {
            cover.by_range = true;
          }
        }
        tile_covered = tile_covered && (cover.by_horizon || cover.by_range);
        covers.push_back(cover);
      }
      const bool tile_drop = tile_covered && !covers.empty() && !older_data(tile.smallest, tile.largest);
      for (const Cover& c : covers) {
        const PageMeta& p = *c.page;
        if (c.by_horizon || (c.by_range && tile_drop)) {
          dropped.push_back(p.index);
          d.after.num_entries -= std::min<uint64_t>(d.after.num_entries, p.entries);
          const uint64_t len = p.size + kBlockTrailerSize;
          if (!d.extents.empty() && d.extents.back().first + d.extents.back().second == p.offset) {
            d.extents.back().second += len;
          } else {
            d.extents.emplace_back(p.offset, len);
          }
          pages++;
          bytes += len;
          continue;
        }
        bool touched = p.delete_key_min < sd.horizon();
        for (const DeleteKeyRangeRecord& r : sd.ranges) {
          touched = touched || (f.smallest_seq < r.seq && r.lo <= p.delete_key_max && p.delete_key_min <= r.hi);
        }
        partial += touched ? 1 : 0;
        remaining++;
        d.after.delete_key_min = std::min(d.after.delete_key_min, p.delete_key_min);
        d.after.delete_key_max = std::max(d.after.delete_key_max, p.delete_key_max);
      }
    }
    if (dropped.size() == f.dropped_pages.size()) continue;
    std::sort(dropped.begin(), dropped.end());
    d.after.dropped_pages = std::move(dropped);
    d.whole_file = remaining == 0 && f.num_range_tombstones == 0;
    drops.push_back(std::move(d));
  }
  stat_partially_covered_pages_.store(partial, std::memory_order_relaxed);

  l.lock();
  if (!s.ok() || drops.empty()) return s;
  VersionEdit edit;
  std::set<uint32_t> touched_cfs;
  for (const Drop& d : drops) {
    if (cfds_.count(d.cf) == 0) continue;  // dropped meanwhile
    edit.DeleteFile(d.cf, d.level, d.before->number);
    if (!d.whole_file) edit.AddFile(d.cf, d.level, d.after);
    touched_cfs.insert(d.cf);
  }
  if (touched_cfs.empty()) return Status::OK();
  versions_->SetLastSequence(last_sequence_.load());
  s = versions_->LogAndApply(&edit);
  if (!s.ok()) return s;
  for (uint32_t id : touched_cfs) InstallSuperVersion(cfds_.at(id).get());
  for (const Drop& d : drops) {
    if (cfds_.count(d.cf) == 0) continue;
    if (d.whole_file) {
      stat_files_dropped_.fetch_add(1, std::memory_order_relaxed);
    } else {
      pending_punches_.push_back(PendingPunch{d.before->number, d.extents, d.before});
    }
  }
  stat_pages_dropped_.fetch_add(pages, std::memory_order_relaxed);
  stat_page_bytes_dropped_.fetch_add(bytes, std::memory_order_relaxed);
  return Status::OK();
}

void DBImpl::PunchDroppedPages() {
  if (pending_punches_.empty()) return;
  std::set<uint64_t> current;
  for (const auto& [id, files] : versions_->current()->cfs) {
    for (int l = 0; l < kNumLevels; l++) {
      for (const FileRef& f : files->levels[l]) current.insert(f->number);
    }
  }
  std::vector<PendingPunch> waiting;
  for (PendingPunch& p : pending_punches_) {
    if (current.count(p.file_number) == 0) continue;  // the file goes away whole
    // A reader of an older version may still read these pages.
    if (!p.before.expired()) {
      waiting.push_back(std::move(p));
      continue;
    }
    const std::string fname = TableFileName(dbname_, p.file_number);
    uint64_t links = 0;
    Status s = env_->GetLinkCount(fname, &links);
    if (!s.ok()) continue;
    if (links > 1) {
      // A checkpoint shares the file (hard link): its copy must stay whole.
      // Retried later, when the checkpoint directory may be gone.
      waiting.push_back(std::move(p));
      continue;
    }
    for (const auto& [offset, len] : p.extents) {
      s = env_->PunchHole(fname, offset, len);
      if (!s.ok()) break;  // NotSupported or an error: the space stays used, nothing is lost
      stat_bytes_punched_.fetch_add(len, std::memory_order_relaxed);
    }
  }
  pending_punches_ = std::move(waiting);
}

}  // namespace lethe
