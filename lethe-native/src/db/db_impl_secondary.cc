// DBImpl: secondary deletes by delete key (KiWi, paper §4.2): the records,
// page drops as manifest edits, and hole punching for the local copy.
#include <algorithm>
#include <map>

#include "compaction/fade.h"
#include "compaction/tile_size.h"
#include "db/db_impl.h"
#include "sst/page.h"
#include "sst/table_builder.h"
#include "sst/table_reader.h"
#include "version/table_cache.h"
#include "util/kill_point.h"

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

namespace {

// A page's surviving entries after a rewrite.
struct Survivor {
  std::string ikey, value;
  uint64_t delete_key;
};

// One page of a file under the version's overrides.
struct EffectivePageRef {
  const PageMeta* own;        // the file's page (index, offset)
  const TableReader* reader;  // where its bytes are now
  const PageMeta* meta;       // and their metadata
  bool patched;
};

// What filtering one page left.
struct FilteredPage {
  std::vector<Survivor> survivors;
  bool changed = false;    // something was removed
  bool pinned = false;     // a snapshot still reads a removed entry, which therefore stays
  uint64_t converted = 0;  // entries turned into point tombstones
};

// Reads a page and applies the records to every entry, as compaction does:
// an entry that all its readers see as removed goes (dropped under a
// horizon, a point tombstone under a range). With no records: a copy.
Status FilterPage(const TableReader& reader, const PageMeta& meta, const SecondaryDeletes* sd,
                  const std::multiset<SequenceNumber>& snapshots, FilteredPage* out) {
  PageRef page;
  Status s = reader.ReadPage(meta, false, &page);
  if (!s.ok()) return s;
  PageIterator it(page);
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    const uint64_t tag = ExtractTag(it.key());
    const SequenceNumber seq = TagSequence(tag);
    const bool tombstone = TagKind(tag) == EntryKind::kTombstone;
    if (sd != nullptr && (!tombstone || it.delete_key() != kMaxDeleteKey)) {
      auto snap = snapshots.lower_bound(seq);
      const SequenceNumber first_reader = snap == snapshots.end() ? kMaxSequenceNumber : *snap;
      const SequenceNumber from = sd->HiddenFrom(seq, it.delete_key());
      const SequenceNumber by_horizon = sd->HorizonHiddenFrom(it.delete_key());
      if (from != kMaxSequenceNumber && from > first_reader) out->pinned = true;
      if (tombstone) {
        // Leaves under a horizon with what it deletes (db.h); under a range it stays.
        if (by_horizon != kMaxSequenceNumber && by_horizon <= first_reader && from <= first_reader) {
          out->changed = true;
          continue;
        }
      } else if (from != kMaxSequenceNumber && from <= first_reader) {
        out->changed = true;
        if (by_horizon != kMaxSequenceNumber && by_horizon <= first_reader) continue;
        out->survivors.push_back(
            Survivor{MakeInternalKey(ExtractSortKey(it.key()), seq, EntryKind::kTombstone), "", kMaxDeleteKey});
        out->converted++;
        continue;
      }
    }
    out->survivors.push_back(Survivor{std::string(it.key()), std::string(it.value()), it.delete_key()});
  }
  if (!it.status().ok()) return Status::Corruption(reader.filename(), it.status().message());
  return Status::OK();
}

// Writes a patch table: one tile of one page per entry of `pages` (page
// index -> entries), in page order.
Status WritePatchTable(Env* env, const std::string& fname, int bloom_bits_per_key,
                       const std::map<uint32_t, std::vector<Survivor>>& pages, uint64_t* size) {
  std::unique_ptr<WritableFile> file;
  Status s = env->NewWritableFile(fname, &file);
  if (!s.ok()) return s;
  TableBuilderOptions bo;
  bo.page_size = SIZE_MAX / 4;  // one page per tile: the tile is cut by hand
  bo.pages_per_tile = 1;
  bo.bloom_bits_per_key = bloom_bits_per_key;
  TableBuilder builder(bo, file.get());
  for (const auto& [index, entries] : pages) {
    for (const Survivor& e : entries) builder.Add(e.ikey, e.value, e.delete_key);
    builder.CutTile();
  }
  s = builder.Finish();
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  *size = builder.FileSize();
  return s;
}

// Sets the entries and delete-key bounds of `f` from the pages it has left
// (patched pages as patched); *remaining: how many.
Status CountRemainingPages(TableCache* tables, FileMetaData* f, size_t* remaining) {
  FileTables t;
  Status s = OpenFileTables(tables, std::make_shared<const FileMetaData>(*f), &t);
  if (!s.ok()) return s;
  f->num_entries = 0;
  f->delete_key_min = kMaxDeleteKey;
  f->delete_key_max = 0;
  *remaining = 0;
  for (const TileMeta& tile : t.table->tiles()) {
    for (const PageMeta& own : tile.pages) {
      bool present;
      const TableReader* reader;
      const PageMeta* p;
      s = t.table->EffectivePage(own, &t.overrides, &present, &reader, &p);
      if (!s.ok()) return s;
      if (!present) continue;
      ++*remaining;
      f->num_entries += p->entries;
      f->delete_key_min = std::min(f->delete_key_min, p->delete_key_min);
      f->delete_key_max = std::max(f->delete_key_max, p->delete_key_max);
    }
  }
  return Status::OK();
}

// Whether the horizon of a family keeps moving: it moved twice within a quarter
// of D_th (10 s with FADE off), the last time no longer ago than that.
bool HorizonMoving(const ColumnFamilyData& cfd, uint64_t now) {
  const uint64_t dth = cfd.options.delete_persistence_threshold_us;
  const uint64_t window = dth == 0 ? 10'000'000 : dth / 4;
  return cfd.horizon_moved_before_us != 0 && cfd.horizon_moved_us - cfd.horizon_moved_before_us <= window &&
         now - std::min(now, cfd.horizon_moved_us) <= window;
}

// While the horizon keeps moving, a partly covered page is rewritten once this
// share of it is covered (or it has waited a quarter of D_th).
constexpr double kPatchShare = 0.5;

// The share of a page's delete-key span [min, max] the records not yet applied
// to file `f` cover, assuming delete keys spread evenly over the span.
double CoveredShare(const SecondaryDeletes& sd, const FileMetaData& f, const PageMeta& p) {
  const long double width = static_cast<long double>(p.delete_key_max - p.delete_key_min) + 1;
  auto share = [&](uint64_t lo, uint64_t hi) {  // of [lo, hi] within [min, max]
    lo = std::max(lo, p.delete_key_min);
    hi = std::min(hi, p.delete_key_max);
    return lo > hi ? 0.0 : static_cast<double>((static_cast<long double>(hi - lo) + 1) / width);
  };
  double best = 0;
  if (sd.horizon() > 0) best = share(0, sd.horizon() - 1);
  for (const DeleteKeyRangeRecord& r : sd.ranges) {
    if (r.seq > f.secondary_applied_seq && f.smallest_seq < r.seq) best = std::max(best, share(r.lo, r.hi));
  }
  return best;
}

}  // namespace

Status DBImpl::DropCoveredPages(std::unique_lock<std::mutex>& l) {
  page_drops_pending_ = false;
  page_drops_deferred_ = false;
  VersionRef version = versions_->current();
  const std::multiset<SequenceNumber> snapshots = snapshots_;
  struct Candidate {
    uint32_t cf;
    int level;
    FileRef file;
    ColumnFamilyOptions options;
    bool horizon_moving;
  };
  std::vector<Candidate> candidates;
  const uint64_t now = clock_->NowMicros();
  for (const auto& [id, files] : version->cfs) {
    const SecondaryDeletes& sd = files->secondary;
    auto cfd = cfds_.find(id);
    if (sd.empty() || cfd == cfds_.end()) continue;
    for (int level = 0; level < kNumLevels; level++) {
      for (const FileRef& f : files->levels[level]) {
        bool maybe = f->delete_key_min < sd.horizon();
        for (const DeleteKeyRangeRecord& r : sd.ranges) {
          maybe = maybe || (f->smallest_seq < r.seq && r.lo <= f->delete_key_max && f->delete_key_min <= r.hi);
        }
        if (maybe) candidates.push_back(Candidate{id, level, f, cfd->second->options, HorizonMoving(*cfd->second, now)});
      }
    }
  }
  if (candidates.empty()) return Status::OK();
  l.unlock();

  // Full pages: decided from the in-memory index alone (no page read).
  // Partly covered pages, at most one per delete tile: read, filtered and
  // written to the file's patch table, the rest of the file untouched.
  struct Change {
    uint32_t cf;
    int level;
    FileRef before;
    FileMetaData after;
    bool whole_file = false;
    std::vector<std::pair<uint64_t, uint64_t>> extents;  // bytes of the file no longer read
    std::vector<uint32_t> pages;  // the pages those bytes are
  };
  std::vector<Change> changes;
  std::vector<FileMetaData> new_patches;  // pending outputs
  uint64_t partial = 0, pages = 0, bytes = 0, rewritten = 0, rewrite_read = 0, rewrite_written = 0;
  bool deferred = false;  // a partly covered page waits: look again at the next periodic wake-up
  Status s;
  for (const Candidate& c : candidates) {
    const ColumnFamilyFiles& files = *version->cfs.at(c.cf);
    const SecondaryDeletes& sd = files.secondary;
    const FileMetaData& f = *c.file;
    FileTables t;
    s = OpenFileTables(table_cache_.get(), c.file, &t);
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
    // Records the file has not applied yet (FADE's view of what is still to do).
    const bool horizon_unapplied = !sd.horizons.empty() && sd.horizons.back().seq > f.secondary_applied_seq;
    auto touched = [&](const PageMeta& p) {
      bool hit = horizon_unapplied && p.delete_key_min < sd.horizon();
      for (const DeleteKeyRangeRecord& r : sd.ranges) {
        hit = hit || (r.seq > f.secondary_applied_seq && f.smallest_seq < r.seq && r.lo <= p.delete_key_max &&
                      p.delete_key_min <= r.hi);
      }
      return hit;
    };
    auto add_extent = [](Change* ch, const PageMeta& own) {
      ch->pages.push_back(own.index);
      const uint64_t len = own.size + kBlockTrailerSize;
      if (!ch->extents.empty() && ch->extents.back().first + ch->extents.back().second == own.offset) {
        ch->extents.back().second += len;
      } else {
        ch->extents.emplace_back(own.offset, len);
      }
    };

    auto worth_patching = [&](const PageMeta& p) {
      if (!c.horizon_moving || CoveredShare(sd, f, p) >= kPatchShare) return true;
      const uint64_t dth = c.options.delete_persistence_threshold_us;
      if (dth == 0) return false;  // no bound to keep: wait for coverage or compaction
      const uint64_t since =
          sd.InvalidationTime(f.secondary_applied_seq, f.smallest_seq, p.delete_key_min, p.delete_key_max);
      return since != 0 && now >= since + dth / 4;
    };

    Change ch{c.cf, c.level, c.file, f, false, {}, {}};
    std::vector<uint32_t> dropped = f.dropped_pages;
    std::vector<EffectivePageRef> to_rewrite;
    bool fully_applied = true;
    for (const TileMeta& tile : t.table->tiles()) {
      // Per remaining page: whether a horizon or a delete-key range covers
      // all its entries for every reader. A horizon's page drops alone:
      // older versions of its keys, wherever they are, lie under the horizon
      // too (monotone delete keys). A range's page drops only with every
      // other remaining page of its tile (an older version of one of its keys
      // may sit in a sibling page, with a delete key below the range) and
      // only when no older file may hold its keys.
      struct Cover {
        EffectivePageRef page;
        bool by_horizon, by_range;
      };
      std::vector<Cover> covers;
      bool tile_covered = true;
      for (const PageMeta& own : tile.pages) {
        bool present;
        const TableReader* reader;
        const PageMeta* p;
        s = t.table->EffectivePage(own, &t.overrides, &present, &reader, &p);
        if (!s.ok()) break;
        if (!present) continue;
        Cover cover{{&own, reader, p, reader != t.table.get()}, false, false};
        if (p->delete_key_max < sd.horizon()) {
          const SequenceNumber from = sd.HorizonHiddenFrom(p->delete_key_max);
          cover.by_horizon = !SnapshotIn(snapshots, f.smallest_seq, from);
        }
        for (const DeleteKeyRangeRecord& r : sd.ranges) {
          if (!cover.by_range && f.largest_seq < r.seq && r.lo <= p->delete_key_min && p->delete_key_max <= r.hi &&
              !SnapshotIn(snapshots, f.smallest_seq, r.seq)) {
            cover.by_range = true;
          }
        }
        tile_covered = tile_covered && (cover.by_horizon || cover.by_range);
        covers.push_back(cover);
      }
      if (!s.ok()) break;
      const bool tile_drop = tile_covered && !covers.empty() && !older_data(tile.smallest, tile.largest);
      std::vector<EffectivePageRef> partly;
      for (const Cover& cv : covers) {
        if (cv.by_horizon || (cv.by_range && tile_drop)) {
          dropped.push_back(cv.page.own->index);
          if (!cv.page.patched) add_extent(&ch, *cv.page.own);
          pages++;
          bytes += cv.page.meta->size + kBlockTrailerSize;
        } else if (touched(*cv.page.meta)) {
          partly.push_back(cv.page);
        }
      }
      partial += partly.size();
      // The paper's partial page drop: one page per tile at most; more (only
      // delete-key ranges make them) are left to FADE's file rewrite. While
      // the horizon keeps moving, a page waits until half of it is covered or
      // it has waited a quarter of D_th: the horizon covers more of it
      // meanwhile, so a page is not rewritten at every step, and FADE's
      // deadline is still met by the rewrite rather than by compacting the
      // whole file. A one-off delete rewrites at once.
      if (partly.size() == 1 && worth_patching(*partly[0].meta)) {
        to_rewrite.push_back(partly[0]);
      } else if (!partly.empty()) {
        fully_applied = false;
        deferred = deferred || partly.size() == 1;
      }
    }
    if (!s.ok()) break;

    // Rewrite the partly covered pages.
    std::map<uint32_t, std::vector<Survivor>> patch_pages;  // page index -> entries
    uint64_t converted = 0;
    for (const EffectivePageRef& ref : to_rewrite) {
      FilteredPage page;
      s = FilterPage(*ref.reader, *ref.meta, &sd, snapshots, &page);
      if (!s.ok()) break;
      rewrite_read += ref.meta->size + kBlockTrailerSize;
      fully_applied = fully_applied && !page.pinned;
      if (!page.changed) continue;
      rewritten++;
      converted += page.converted;
      if (!ref.patched) add_extent(&ch, *ref.own);
      if (page.survivors.empty()) {
        dropped.push_back(ref.own->index);
      } else {
        patch_pages[ref.own->index] = std::move(page.survivors);
      }
    }
    if (!s.ok()) break;
    std::sort(dropped.begin(), dropped.end());
    dropped.erase(std::unique(dropped.begin(), dropped.end()), dropped.end());
    if (dropped.size() == f.dropped_pages.size() && patch_pages.empty()) {
      continue;  // nothing changes in this file
    }

    // The new patch table: earlier patched pages that stay, then the new
    // ones, each its own tile of one page, in page order.
    FileMetaData& after = ch.after;
    after.dropped_pages = dropped;
    std::vector<uint32_t> kept_patched;
    for (uint32_t index : f.patched_pages) {
      if (!std::binary_search(dropped.begin(), dropped.end(), index) && patch_pages.count(index) == 0) {
        kept_patched.push_back(index);
      }
    }
    for (uint32_t index : kept_patched) {
      const int slot = f.PatchSlot(index);
      const PageMeta& meta = t.patch->tiles()[static_cast<size_t>(slot)].pages[0];
      FilteredPage page;
      s = FilterPage(*t.patch, meta, nullptr, snapshots, &page);
      if (!s.ok()) break;
      rewrite_read += meta.size + kBlockTrailerSize;
      patch_pages[index] = std::move(page.survivors);
    }
    if (!s.ok()) break;
    after.patched_pages.clear();
    after.patch_file = 0;
    after.patch_size = 0;
    if (!patch_pages.empty()) {
      FileMetaData patch;
      patch.number = NewPendingFileNumber();
      s = WritePatchTable(env_, TableFileName(dbname_, patch.number), c.options.bloom_bits_per_key, patch_pages,
                          &patch.file_size);
      new_patches.push_back(patch);
      if (!s.ok()) break;
      for (const auto& [index, entries] : patch_pages) after.patched_pages.push_back(index);
      rewrite_written += patch.file_size;
      after.patch_file = patch.number;
      after.patch_size = patch.file_size;
    }
    size_t remaining = 0;
    s = CountRemainingPages(table_cache_.get(), &after, &remaining);
    if (!s.ok()) break;
    if (converted > 0) {
      after.num_point_tombstones += converted;
      uint64_t since = sd.InvalidationTime(f.secondary_applied_seq, f.smallest_seq, f.delete_key_min,
                                           f.delete_key_max);
      if (since == 0) since = now | 1;
      if (after.oldest_tombstone_time_us == 0 || since < after.oldest_tombstone_time_us) {
        after.oldest_tombstone_time_us = since;
      }
    }
    if (fully_applied) after.secondary_applied_seq = std::max(f.secondary_applied_seq, sd.LatestSequence());
    ch.whole_file = remaining == 0 && f.num_range_tombstones == 0;
    changes.push_back(std::move(ch));
  }
  stat_partially_covered_pages_.store(partial, std::memory_order_relaxed);
  if (s.ok() && !new_patches.empty()) s = env_->SyncDir(dbname_);
  if (s.ok() && !new_patches.empty()) KillPoint("page_drop.patches_written");

  l.lock();
  page_drops_deferred_ = page_drops_deferred_ || deferred;
  ReleasePendingOutputs(new_patches);
  auto discard = [&] {
    if (versions_->manifest_failed()) {
      // The edit naming them may be durable: keep them, pending, for good.
      for (const FileMetaData& p : new_patches) pending_outputs_.insert(p.number);
      return;
    }
    for (const FileMetaData& p : new_patches) env_->RemoveFile(TableFileName(dbname_, p.number));
  };
  if (!s.ok()) {
    discard();
    return s;
  }
  if (changes.empty()) return Status::OK();
  VersionEdit edit;
  std::set<uint32_t> touched_cfs;
  for (const Change& ch : changes) {
    if (cfds_.count(ch.cf) == 0) continue;  // dropped meanwhile
    edit.DeleteFile(ch.cf, ch.level, ch.before->number);
    if (!ch.whole_file) edit.AddFile(ch.cf, ch.level, ch.after);
    touched_cfs.insert(ch.cf);
  }
  if (touched_cfs.empty()) {
    discard();
    return Status::OK();
  }
  versions_->SetLastSequence(last_sequence_.load());
  s = LogAndApply(&edit);
  if (!s.ok()) {
    discard();
    return s;
  }
  KillPoint("page_drop.applied");
  InstallSuperVersions();
  for (const Change& ch : changes) {
    if (cfds_.count(ch.cf) == 0) continue;
    if (ch.whole_file) {
      stat_files_dropped_.fetch_add(1, std::memory_order_relaxed);
    } else if (!ch.extents.empty()) {
      pending_punches_.push_back(PendingPunch{ch.before->number, ch.extents, ch.pages, ch.before});
    }
  }
  stat_pages_dropped_.fetch_add(pages, std::memory_order_relaxed);
  stat_page_bytes_dropped_.fetch_add(bytes, std::memory_order_relaxed);
  stat_pages_rewritten_.fetch_add(rewritten, std::memory_order_relaxed);
  stat_rewrite_bytes_read_.fetch_add(rewrite_read, std::memory_order_relaxed);
  stat_rewrite_bytes_written_.fetch_add(rewrite_written, std::memory_order_relaxed);
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
    // A reader may still read these pages: one holding the record the drop
    // replaced, or a version whose record of the file predates even that one.
    if (!p.before.expired() || versions_->AnyLiveRecordReads(p.file_number, p.pages)) {
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
      KillPoint("page_drop.punching");
      stat_bytes_punched_.fetch_add(len, std::memory_order_relaxed);
    }
  }
  pending_punches_ = std::move(waiting);
}

}  // namespace lethe
