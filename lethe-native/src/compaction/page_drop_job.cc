#include "compaction/page_drop_job.h"

#include <algorithm>

#include "sst/page.h"
#include "sst/table_builder.h"

namespace lethe {

namespace {

// What reading one page under the records left of it.
struct FilteredPage {
  std::vector<OutputEntry> survivors;
  bool changed = false;    // an entry was removed or turned into a tombstone
  bool pinned = false;     // a snapshot still reads an entry a record hides
  uint64_t converted = 0;  // entries turned into point tombstones
};

// Reads a page and applies the records to every entry (null: a plain copy).
Status FilterPage(const TableReader& reader, const PageMeta& meta, const SecondaryDeletes* records,
                  const std::multiset<SequenceNumber>& snapshots, FilteredPage* out) {
  PageRef page;
  Status s = reader.ReadPage(meta, false, &page);
  if (!s.ok()) return s;
  PageIterator it(page);
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    const uint64_t tag = ExtractTag(it.key());
    const SequenceNumber seq = TagSequence(tag);
    EntryFate fate;
    if (records != nullptr) {
      auto reader_snapshot = snapshots.lower_bound(seq);
      const SequenceNumber first_reader = reader_snapshot == snapshots.end() ? kMaxSequenceNumber : *reader_snapshot;
      fate = records->FateOf(seq, TagKind(tag), it.delete_key(), first_reader);
    }
    out->pinned = out->pinned || fate.pinned;
    out->changed = out->changed || fate.action != EntryFate::kKeep;
    if (fate.action == EntryFate::kDrop) continue;
    if (fate.action == EntryFate::kTombstone) {
      out->survivors.push_back(
          OutputEntry{MakeInternalKey(ExtractSortKey(it.key()), seq, EntryKind::kTombstone), "", kMaxDeleteKey});
      out->converted++;
      continue;
    }
    out->survivors.push_back(OutputEntry{std::string(it.key()), std::string(it.value()), it.delete_key()});
  }
  if (!it.status().ok()) return Status::Corruption(reader.filename(), it.status().message());
  return Status::OK();
}

uint64_t StoredBytes(const PageMeta& p) { return p.size + kBlockTrailerSize; }

// The single page of a patch table's tile `slot`; *holder keeps it alive.
Status PatchPage(const TableReader& patch, size_t slot, PartitionRef* holder, const PageMeta** page) {
  for (size_t p = 0; p < patch.partition_count(); p++) {
    Status s = patch.ReadPartition(p, /*fill_cache=*/false, holder);
    if (!s.ok()) return s;
    if (slot < (*holder)->tile_count()) {
      const std::span<const PageMeta> pages = (*holder)->TilePages(slot);
      if (pages.size() != 1) break;
      *page = &pages[0];
      return Status::OK();
    }
    slot -= (*holder)->tile_count();
  }
  return Status::Corruption(patch.filename(), "patch table has no single page at a patched slot");
}

}  // namespace

PageDropJob::PageDropJob(PageDropJobOptions options, FileTables tables)
    : options_(std::move(options)), tables_(std::move(tables)) {}

Status PageDropJob::Tiles(std::vector<PlannedTile>* tiles) {
  tiles->clear();
  Status s = tables_.table->ReadPartitions(&partitions_);
  if (!s.ok()) return s;
  for (const PartitionRef& part : partitions_) {
    for (size_t t = 0; t < part->tile_count(); t++) {
      const TileView tile = part->tile(t);
      PlannedTile planned{tile.smallest, tile.largest, {}};
      for (const PageMeta& own : tile.pages) {
        bool present;
        PageSource src;
        s = tables_.table->EffectivePage(*part, own, &tables_.overrides, &present, &src);
        if (!s.ok()) return s;
        if (!present) continue;
        pages_[own.index] = PageRef{&own, src.reader, src.meta};
        planned.pages.push_back(PlannedPage{own.index, src.meta->delete_key_min, src.meta->delete_key_max,
                                            StoredBytes(*src.meta), src.meta != &own});
      }
      tiles->push_back(std::move(planned));
    }
  }
  return Status::OK();
}

void AppendPageExtent(const PageMeta& p, std::vector<std::pair<uint64_t, uint64_t>>* extents) {
  const uint64_t len = StoredBytes(p);
  if (!extents->empty() && extents->back().first + extents->back().second == p.offset) {
    extents->back().second += len;
  } else {
    extents->emplace_back(p.offset, len);
  }
}

bool PageDropJob::FreedNow(uint32_t index) const {
  auto ref = pages_.find(index);
  if (ref == pages_.end() || ref->second.patched()) return false;  // unread since an earlier drop
  return std::binary_search(dropped_.begin(), dropped_.end(), index) ||
         std::binary_search(rewritten_.begin(), rewritten_.end(), index);
}

bool PageDropJob::ReadAfter(uint32_t index) const {
  auto ref = pages_.find(index);
  return ref != pages_.end() && !ref->second.patched() && !FreedNow(index);
}

// Pages are not aligned to file-system blocks, so a block often holds the
// end of one page and the start of the next. Punching only this job's pages
// would keep every such block whose other page went in an earlier drop; the
// whole run of unread bytes around them is punched instead (punching a hole
// again frees nothing more, and the statistic counts only blocks freed).
void PageDropJob::FreeUnreadRuns(PageDropResult* r) {
  std::vector<std::pair<uint64_t, uint64_t>> run;
  std::vector<uint32_t> run_pages;
  bool freed_now = false;
  auto end_run = [&]() {
    if (freed_now) {
      r->extents.insert(r->extents.end(), run.begin(), run.end());
      r->freed_pages.insert(r->freed_pages.end(), run_pages.begin(), run_pages.end());
    }
    run.clear();
    run_pages.clear();
    freed_now = false;
  };
  for (const PartitionRef& part : partitions_) {
    for (const PageMeta& page : part->pages()) {
      if (ReadAfter(page.index)) {
        end_run();
        continue;
      }
      if (!run.empty() && run.back().first + run.back().second != page.offset) end_run();  // not adjacent
      AppendPageExtent(page, &run);
      run_pages.push_back(page.index);
      freed_now = freed_now || FreedNow(page.index);
    }
  }
  end_run();
}

// The earlier patched pages that stay: not dropped (earlier or now) and not
// rewritten (RewritePage keeps an unchanged one), ascending.
std::vector<uint32_t> PageDropJob::KeptPatches(const std::vector<uint32_t>& rewrite) const {
  std::vector<uint32_t> gone = dropped_;
  std::sort(gone.begin(), gone.end());
  std::vector<uint32_t> kept;
  for (uint32_t index : tables_.file->patched_pages) {
    if (!std::binary_search(gone.begin(), gone.end(), index) &&
        !std::binary_search(rewrite.begin(), rewrite.end(), index)) {
      kept.push_back(index);
    }
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

Status PageDropJob::RewriteInOrder(const PageDropPlan& plan, const SecondaryDeletes& records,
                                   const std::multiset<SequenceNumber>& snapshots, PageDropResult* r) {
  std::vector<uint32_t> earlier = tables_.file->dropped_pages;
  std::sort(earlier.begin(), earlier.end());
  for (uint32_t index : plan.drop) {
    changes_ = changes_ || !std::binary_search(earlier.begin(), earlier.end(), index);
  }
  std::vector<uint32_t> rewrite(plan.rewrite.begin(), plan.rewrite.end());
  std::sort(rewrite.begin(), rewrite.end());
  const std::vector<uint32_t> kept = KeptPatches(rewrite);
  size_t k = 0;
  for (uint32_t index : rewrite) {
    for (; k < kept.size() && kept[k] < index; k++) {
      if (Status s = Keep(kept[k], r); !s.ok()) return s;
    }
    if (Status s = RewritePage(index, records, snapshots, r); !s.ok()) return s;
  }
  for (; k < kept.size(); k++) {
    if (Status s = Keep(kept[k], r); !s.ok()) return s;
  }
  return changes_ ? CopyKeptPatches(r) : Status::OK();
}

Status PageDropJob::RewritePage(uint32_t index, const SecondaryDeletes& records,
                                const std::multiset<SequenceNumber>& snapshots, PageDropResult* r) {
  const PageRef& ref = pages_.at(index);
  FilteredPage page;
  Status s = FilterPage(*ref.reader, *ref.meta, &records, snapshots, &page);
  if (!s.ok()) return s;
  r->rewrite_bytes_read += StoredBytes(*ref.meta);
  pinned_ = pinned_ || page.pinned;
  if (!page.changed) {
    // An earlier patch read unchanged stays.
    return ref.patched() ? Keep(index, r) : Status::OK();
  }
  changes_ = true;
  r->pages_rewritten++;
  converted_ += page.converted;
  if (page.survivors.empty()) {
    dropped_.push_back(index);
    return Status::OK();
  }
  rewritten_.push_back(index);
  if (s = CopyKeptPatches(r); !s.ok()) return s;  // the patch's earlier pages first
  return AddPatchPage(index, page.survivors, r);
}

Status PageDropJob::Keep(uint32_t index, PageDropResult* r) {
  kept_.push_back(index);
  return changes_ ? CopyKeptPatches(r) : Status::OK();
}

Status PageDropJob::CopyKeptPatches(PageDropResult* r) {
  for (uint32_t index : kept_) {
    if (Status s = CopyKeptPatch(index, r); !s.ok()) return s;
  }
  kept_.clear();
  return Status::OK();
}

// An earlier patched page that stays moves into the new patch table unchanged.
Status PageDropJob::CopyKeptPatch(uint32_t index, PageDropResult* r) {
  static const std::multiset<SequenceNumber> kNoSnapshots;
  const PageMeta* meta = nullptr;
  PartitionRef holder;
  Status s = PatchPage(*tables_.patch, static_cast<size_t>(tables_.file->PatchSlot(index)), &holder, &meta);
  if (!s.ok()) return s;
  FilteredPage page;
  s = FilterPage(*tables_.patch, *meta, nullptr, kNoSnapshots, &page);
  if (!s.ok()) return s;
  r->rewrite_bytes_read += StoredBytes(*meta);
  return AddPatchPage(index, page.survivors, r);
}

// A patch table holds one tile of one page per patched page, in page order.
Status PageDropJob::AddPatchPage(uint32_t index, const std::vector<OutputEntry>& entries, PageDropResult* r) {
  if (patch_ == nullptr) {
    r->new_patch = options_.new_file_number();
    Status s = options_.env->NewWritableFile(TableFileName(options_.dbname, r->new_patch), &patch_file_);
    if (!s.ok()) return s;
    TableBuilderOptions bo;
    bo.page_size = SIZE_MAX / 4;  // one page per tile: the tile is cut by hand
    bo.pages_per_tile = 1;
    bo.bloom_bits_per_key = options_.bloom_bits_per_key;
    bo.compression = options_.compression;
    bo.index_partition_size = 0;  // one partition: readers keep a patch's index
    patch_ = std::make_unique<TableBuilder>(bo, patch_file_.get());
  }
  for (const OutputEntry& e : entries) patch_->Add(e.ikey, e.value, e.delete_key);
  patch_->CutTile();
  patched_.push_back(index);
  return patch_->status();
}

Status PageDropJob::FinishPatchTable(PageDropResult* r) {
  Status s = patch_->Finish();
  if (s.ok()) s = patch_file_->Sync();
  if (s.ok()) s = patch_file_->Close();
  if (!s.ok()) return s;
  FileMetaData& after = r->after;
  after.patch_file = r->new_patch;
  after.patch_size = patch_->FileSize();
  after.patched_pages = patched_;
  r->rewrite_bytes_written += after.patch_size;
  return Status::OK();
}

// Sets the entries and delete-key bounds of `f` from the pages it has left
// (patched pages as patched); *remaining: how many; *from_file: how many of
// them are still read from the file itself.
Status PageDropJob::CountRemainingPages(FileMetaData* f, size_t* remaining, size_t* from_file) {
  FileTables t;
  Status s = OpenFileTables(options_.tables, std::make_shared<const FileMetaData>(*f), &t);
  if (!s.ok()) return s;
  f->num_entries = 0;
  f->delete_key_min = kMaxDeleteKey;
  f->delete_key_max = 0;
  *remaining = 0;
  *from_file = 0;
  std::vector<PartitionRef> partitions;
  if (!(s = t.table->ReadPartitions(&partitions)).ok()) return s;
  for (const PartitionRef& part : partitions) {
    for (const PageMeta& own : part->pages()) {
      bool present;
      PageSource src;
      s = t.table->EffectivePage(*part, own, &t.overrides, &present, &src);
      if (!s.ok()) return s;
      if (!present) continue;
      ++*remaining;
      if (src.reader == t.table) ++*from_file;
      f->num_entries += src.meta->entries;
      f->delete_key_min = std::min(f->delete_key_min, src.meta->delete_key_min);
      f->delete_key_max = std::max(f->delete_key_max, src.meta->delete_key_max);
    }
  }
  return Status::OK();
}

Status PageDropJob::Run(const PageDropPlan& plan, const SecondaryDeletes& records,
                        const std::multiset<SequenceNumber>& snapshots, PageDropResult* r) {
  const FileMetaData& f = *tables_.file;
  dropped_ = f.dropped_pages;
  dropped_.insert(dropped_.end(), plan.drop.begin(), plan.drop.end());
  Status s = RewriteInOrder(plan, records, snapshots, r);
  if (!s.ok()) return s;
  std::sort(dropped_.begin(), dropped_.end());
  dropped_.erase(std::unique(dropped_.begin(), dropped_.end()), dropped_.end());
  r->changed = dropped_.size() != f.dropped_pages.size() || !rewritten_.empty();
  if (!r->changed) return Status::OK();  // nothing written
  FreeUnreadRuns(r);

  FileMetaData& after = r->after;
  after = f;
  after.dropped_pages = dropped_;
  after.patched_pages.clear();
  after.patch_file = 0;
  after.patch_size = 0;
  if (patch_ != nullptr) s = FinishPatchTable(r);
  size_t remaining = 0;
  size_t from_file = 0;
  if (s.ok()) s = CountRemainingPages(&after, &remaining, &from_file);
  if (!s.ok()) return s;
  if (converted_ > 0) {
    after.num_point_tombstones += converted_;
    after.tombstone_delete_key_max = kMaxDeleteKey;  // not tracked for converted entries
    uint64_t since = records.InvalidationTime(f.secondary_applied_seq, f.smallest_seq, f.delete_key_min,
                                              f.delete_key_max);
    if (since == 0) since = options_.now_us | 1;
    if (after.oldest_tombstone_time_us == 0 || since < after.oldest_tombstone_time_us) {
      after.oldest_tombstone_time_us = since;
    }
  }
  if (plan.applies_all && !pinned_) {
    after.secondary_applied_seq = std::max(f.secondary_applied_seq, records.LatestSequence());
  }
  r->whole_file = remaining == 0 && f.num_range_tombstones == 0;
  if (remaining > 0 && from_file == 0 && f.num_range_tombstones == 0) return ReplaceByPatch(r);
  return Status::OK();
}

// The file reads none of its own pages any more, only its patch table's: it
// would keep its index and filters, and a full copy its length, for nothing.
// The patch table takes its place if it is a table in its own right, its
// tiles in sort-key order. That holds when the file has one page per tile;
// with more, the patched pages of one tile overlap, and the file stays.
// The record keeps the file's sequence bounds (level 0's order), creation
// time and secondary-delete progress.
Status PageDropJob::ReplaceByPatch(PageDropResult* r) {
  FileMetaData& after = r->after;
  FileMetaData patch;
  patch.number = after.patch_file;
  patch.file_size = after.patch_size;
  std::shared_ptr<const TableReader> table;
  std::vector<PartitionRef> partitions;
  Status s = options_.tables->FindTable(patch, &table);
  if (s.ok()) s = table->ReadPartitions(&partitions);
  if (!s.ok()) return s;
  std::string smallest, largest;
  bool first = true;
  for (const PartitionRef& part : partitions) {
    for (size_t t = 0; t < part->tile_count(); t++) {
      const TileView tile = part->tile(t);
      if (!first && !(largest < tile.smallest)) return Status::OK();  // overlapping tiles
      if (first) smallest = tile.smallest;
      largest = tile.largest;
      first = false;
    }
  }
  const TableProperties& p = table->properties();
  after.number = patch.number;
  after.file_size = patch.file_size;
  after.reader = PinnedReader();  // the copied record's reader is the file's
  after.smallest = std::move(smallest);
  after.largest = std::move(largest);
  after.SetCounts(p);  // no range tombstones: the file had none
  after.tombstone_delete_key_max = p.point_tombstones == 0 ? 0 : kMaxDeleteKey;  // not tracked for patches
  if (p.point_tombstones == 0) {
    after.oldest_tombstone_time_us = 0;
    after.estimated_invalidated = 0;
  }
  after.dropped_pages.clear();
  after.patched_pages.clear();
  after.patch_file = 0;
  after.patch_size = 0;
  r->replaced_by_patch = true;
  return Status::OK();
}

}  // namespace lethe
