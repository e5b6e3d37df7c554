#include "version/version.h"

#include <algorithm>
#include <set>

#include "format/internal_key.h"

namespace lethe {

std::vector<FileRef> ColumnFamilyFiles::Overlapping(int level, std::string_view lo,
                                                    std::string_view hi) const {
  std::vector<FileRef> result;
  for (const FileRef& f : levels[level]) {
    if (f->Overlaps(lo, hi)) result.push_back(f);
  }
  return result;
}

bool ColumnFamilyFiles::DeeperOverlap(int level, std::string_view lo, std::string_view hi) const {
  for (int l = level + 1; l < kNumLevels; l++) {
    for (const FileRef& f : levels[l]) {
      if (f->Overlaps(lo, hi)) return true;
    }
  }
  return false;
}

bool ColumnFamilyFiles::OlderOverlap(int level, const FileRef& f, std::string_view lo, std::string_view hi) const {
  if (level == 0) {
    auto self = std::find(levels[0].begin(), levels[0].end(), f);
    for (auto it = self == levels[0].end() ? self : self + 1; it != levels[0].end(); ++it) {
      if ((*it)->Overlaps(lo, hi)) return true;
    }
  }
  return DeeperOverlap(level, lo, hi);
}

uint64_t ColumnFamilyFiles::LevelBytes(int level) const {
  uint64_t sum = 0;
  for (const FileRef& f : levels[level]) sum += f->file_size;
  return sum;
}

int ColumnFamilyFiles::DeepestNonEmptyLevel() const {
  for (int l = kNumLevels - 1; l >= 0; l--) {
    if (!levels[l].empty()) return l;
  }
  return -1;
}

Status ColumnFamilyFiles::CheckInvariants() const {
  for (size_t i = 1; i < levels[0].size(); i++) {
    if (levels[0][i - 1]->largest_seq < levels[0][i]->largest_seq) {
      return Status::Corruption("invariant: level 0 not ordered newest first");
    }
  }
  for (int l = 1; l < kNumLevels; l++) {
    for (size_t i = 0; i < levels[l].size(); i++) {
      const FileMetaData& f = *levels[l][i];
      if (f.largest < f.smallest) return Status::Corruption("invariant: file bounds inverted");
      if (i > 0 && !(levels[l][i - 1]->largest < f.smallest)) {
        const FileMetaData& p = *levels[l][i - 1];
        return Status::Corruption("invariant: overlapping files in level " + std::to_string(l) + ": #" +
                                  std::to_string(p.number) + " [" + p.smallest + ", " + p.largest + "] and #" +
                                  std::to_string(f.number) + " [" + f.smallest + ", " + f.largest + "]");
      }
    }
  }
  return Status::OK();
}

Status Version::Apply(const VersionEdit& edit, std::shared_ptr<Version>* result) const {
  auto v = std::make_shared<Version>();
  v->cfs = cfs;
  for (const auto& cf : edit.added_cfs_) {
    if (v->cfs.count(cf.id)) return Status::Corruption("column family added twice", cf.name);
    auto files = std::make_shared<ColumnFamilyFiles>();
    files->descriptor = cf;
    v->cfs[cf.id] = std::move(files);
  }
  for (uint32_t id : edit.dropped_cfs_) v->cfs.erase(id);

  // Copy-on-write: only the families touched by file changes are copied.
  std::map<uint32_t, std::shared_ptr<ColumnFamilyFiles>> touched;
  auto touch = [&](uint32_t cf) -> ColumnFamilyFiles* {
    auto it = touched.find(cf);
    if (it != touched.end()) return it->second.get();
    auto base = v->cfs.find(cf);
    if (base == v->cfs.end()) return nullptr;
    auto copy = std::make_shared<ColumnFamilyFiles>(*base->second);
    touched[cf] = copy;
    return copy.get();
  };
  for (const auto& d : edit.deleted_files_) {
    ColumnFamilyFiles* files = touch(d.cf);
    if (files == nullptr) continue;  // the family was dropped later in the log
    auto& level = files->levels[d.level];
    auto it = std::find_if(level.begin(), level.end(),
                           [&](const FileRef& f) { return f->number == d.number; });
    if (it == level.end()) {
      return Status::Corruption("manifest deletes a file that is not in the version",
                                std::to_string(d.number));
    }
    level.erase(it);
  }
  for (const auto& [cf, records] : edit.secondary_deletes_) {
    ColumnFamilyFiles* files = touch(cf);
    if (files != nullptr) files->secondary = records;
  }
  for (const auto& n : edit.new_files_) {
    ColumnFamilyFiles* files = touch(n.cf);
    if (files == nullptr) continue;
    files->levels[n.level].push_back(std::make_shared<const FileMetaData>(n.meta));
  }
  for (auto& [id, files] : touched) {
    std::sort(files->levels[0].begin(), files->levels[0].end(), [](const FileRef& a, const FileRef& b) {
      return a->largest_seq != b->largest_seq ? a->largest_seq > b->largest_seq : a->number > b->number;
    });
    for (int l = 1; l < kNumLevels; l++) {
      std::sort(files->levels[l].begin(), files->levels[l].end(),
                [](const FileRef& a, const FileRef& b) { return a->smallest < b->smallest; });
    }
#ifdef LETHE_INVARIANT_CHECKS
    Status s = files->CheckInvariants();
    if (!s.ok()) return s;
#endif
    v->cfs[id] = std::move(files);
  }
  *result = std::move(v);
  return Status::OK();
}

Status OpenFileReaders(TableCache* tables, const FileMetaData& f, FileReaders* out, TableOpen open) {
  out->patch = nullptr;
  out->patch_owner.reset();
  Status s = tables->GetReader(f, &out->table, &out->table_owner, open);
  if (!s.ok()) return s;
  if (f.patch_file != 0) {
    FileMetaData patch;
    patch.number = f.patch_file;
    patch.file_size = f.patch_size;
    s = tables->FindTable(patch, &out->patch_owner, open);
    if (!s.ok()) return s;
    out->patch = out->patch_owner.get();
  }
  out->overrides = PageOverrides{&f.dropped_pages, &f.patched_pages, out->patch};
  return Status::OK();
}

Status OpenFileTables(TableCache* tables, const FileRef& f, FileTables* out) {
  out->file = f;
  return OpenFileReaders(tables, *f, out);
}

Status GetFromFiles(const ColumnFamilyFiles& files, TableCache* tables, GetContext* ctx, bool fill_cache,
                    std::optional<uint64_t> delete_key) {
  Status s;
  ForEachFileContaining(files, ctx->key(), [&](const FileRef& f) {
    if (delete_key.has_value() && !f->MayHoldDeleteKey(*delete_key)) return false;
    FileReaders t;
    s = OpenFileReaders(tables, *f, &t);
    if (s.ok()) s = t.table->Get(ctx, fill_cache, &t.overrides);
    return !s.ok() || ctx->EndSource();
  });
  return s;
}

namespace {

// Looks up the keys of `group` in file f, then ends the source for each.
void GetGroupFromFile(TableCache* tables, const FileMetaData& f, std::span<GetContext* const> group,
                      bool fill_cache) {
  FileReaders t;
  const Status s = OpenFileReaders(tables, f, &t);
  if (s.ok()) t.table->MultiGet(group, fill_cache, &t.overrides);
  for (GetContext* ctx : group) {
    if (!s.ok()) ctx->Fail(s);
    ctx->EndSource();
  }
}

// The probes of the keys in `level` (ascending, as ctxs): each key that is
// not done with the file that may hold it, opened into *readers. A key whose
// file cannot be opened fails.
void AddLevelProbes(const std::vector<FileRef>& level, TableCache* tables, std::span<GetContext* const> ctxs,
                    std::vector<FileReaders>* readers, std::vector<TableProbe>* probes) {
  auto it = level.begin();
  const FileMetaData* current = nullptr;
  Status opened;
  for (GetContext* ctx : ctxs) {
    if (ctx->done()) continue;
    // Keys ascend, so the file holding the next one is never to the left.
    it = FirstFileEndingAtOrAfter(it, level.end(), ctx->key());
    if (it == level.end()) break;
    if (ctx->key() < std::string_view((*it)->smallest)) continue;
    if (it->get() != current) {
      current = it->get();
      readers->emplace_back();
      opened = OpenFileReaders(tables, *current, &readers->back());
    }
    if (!opened.ok()) {
      ctx->Fail(opened);
      continue;
    }
    probes->push_back(TableProbe{readers->back().table, &readers->back().overrides, ctx});
  }
}

}  // namespace

void MultiGetFromFiles(const ColumnFamilyFiles& files, TableCache* tables, std::span<GetContext* const> ctxs,
                       bool fill_cache) {
  // Level 0's files overlap: one after the other, newest first.
  std::vector<GetContext*> group;
  group.reserve(ctxs.size());
  for (const FileRef& f : files.levels[0]) {
    for (GetContext* ctx : ctxs) {
      if (!ctx->done() && f->Contains(ctx->key())) group.push_back(ctx);
    }
    if (!group.empty()) GetGroupFromFile(tables, *f, group, fill_cache);
    group.clear();
  }
  // A deeper level holds a key in one file at most: the level's keys are
  // looked up together, whichever files they are in.
  std::vector<FileReaders> readers;
  readers.reserve(ctxs.size());  // at most one file per key: the probes' pointers stay valid
  std::vector<TableProbe> probes;
  probes.reserve(ctxs.size());
  for (int l = 1; l < kNumLevels; l++) {
    readers.clear();
    probes.clear();
    AddLevelProbes(files.levels[l], tables, ctxs, &readers, &probes);
    TableReader::MultiGet(probes, fill_cache);
    for (const TableProbe& p : probes) p.ctx->EndSource();
  }
}

namespace {

class LevelIterator final : public InternalIterator {
 public:
  LevelIterator(std::shared_ptr<const std::vector<FileRef>> files, TableCache* tables, bool fill_cache)
      : files_holder_(std::move(files)), files_(*files_holder_), tables_(tables), fill_cache_(fill_cache) {}

  bool Valid() const override { return valid_; }
  void SeekToFirst() override {
    Open(0);
    if (iter_) iter_->SeekToFirst();
    SkipEmpty();
  }
  void SeekToLast() override {
    OpenBefore(files_.size());
    SkipEmpty(/*backward=*/true);
  }
  // A seek within the open file keeps it open (a read skipping what a range
  // tombstone covers seeks again and again, mostly a few entries ahead).
  void Seek(std::string_view target) override {
    std::string_view sk = ExtractSortKey(target);
    const auto index = static_cast<size_t>(FirstFileEndingAtOrAfter(files_.begin(), files_.end(), sk) - files_.begin());
    if (iter_ == nullptr || index != index_) Open(index);
    if (iter_) iter_->Seek(target);
    SkipEmpty();
  }
  void Next() override {
    iter_->Next();
    SkipEmpty();
  }
  void Prev() override {
    iter_->Prev();
    SkipEmpty(/*backward=*/true);
  }
  std::string_view key() const override { return key_; }
  std::string_view value() const override { return value_; }
  uint64_t delete_key() const override { return delete_key_; }
  Status status() const override {
    if (!status_.ok()) return status_;
    return iter_ ? iter_->status() : Status::OK();
  }

 private:
  void Open(size_t index) {
    iter_.reset();
    tables_open_ = FileTables();
    index_ = index;
    if (index >= files_.size() || !status_.ok()) return;
    Status s = OpenFileTables(tables_, files_[index], &tables_open_);
    if (!s.ok()) {
      status_ = s;
      return;
    }
    iter_ = tables_open_.table->NewIterator(fill_cache_, &tables_open_.overrides);
  }
  // Moves on to the nearest file with entries in the direction of travel.
  void SkipEmpty(bool backward = false) {
    while (iter_ != nullptr && !iter_->Valid()) {
      if (!iter_->status().ok()) {
        status_ = iter_->status();
        iter_.reset();
        break;
      }
      if (backward) {
        OpenBefore(index_);
      } else {
        Open(index_ + 1);
        if (iter_) iter_->SeekToFirst();
      }
    }
    CacheEntry();
  }
  // Opens the file before file index at its last entry (none before the first).
  void OpenBefore(size_t index) {
    if (index == 0) {
      iter_.reset();
      tables_open_ = FileTables();
      return;
    }
    Open(index - 1);
    if (iter_) iter_->SeekToLast();
  }
  // Caches the entry: callers read it several times per move.
  void CacheEntry() {
    valid_ = iter_ != nullptr;
    if (valid_) {
      key_ = iter_->key();
      value_ = iter_->value();
      delete_key_ = iter_->delete_key();
    }
  }

  bool valid_ = false;
  std::string_view key_, value_;
  uint64_t delete_key_ = 0;
  std::shared_ptr<const std::vector<FileRef>> files_holder_;
  const std::vector<FileRef>& files_;
  TableCache* tables_;
  bool fill_cache_;
  size_t index_ = 0;
  FileTables tables_open_;  // keeps iter_'s tables and overrides alive
  std::unique_ptr<InternalIterator> iter_;
  Status status_;
};

// Holds a table open for the lifetime of its iterator.
class OwningTableIterator final : public InternalIterator {
 public:
  OwningTableIterator(FileTables tables, bool fill_cache)
      : tables_(std::move(tables)), iter_(tables_.table->NewIterator(fill_cache, &tables_.overrides)) {}
  bool Valid() const override { return iter_->Valid(); }
  void SeekToFirst() override { iter_->SeekToFirst(); }
  void SeekToLast() override { iter_->SeekToLast(); }
  void Seek(std::string_view t) override { iter_->Seek(t); }
  void Next() override { iter_->Next(); }
  void Prev() override { iter_->Prev(); }
  std::string_view key() const override { return iter_->key(); }
  std::string_view value() const override { return iter_->value(); }
  uint64_t delete_key() const override { return iter_->delete_key(); }
  Status status() const override { return iter_->status(); }

 private:
  FileTables tables_;  // read by iter_
  std::unique_ptr<InternalIterator> iter_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewLevelIterator(std::vector<FileRef> files, TableCache* tables,
                                                   bool fill_cache) {
  return NewLevelIterator(std::make_shared<const std::vector<FileRef>>(std::move(files)), tables, fill_cache);
}

std::unique_ptr<InternalIterator> NewLevelIterator(std::shared_ptr<const std::vector<FileRef>> files,
                                                   TableCache* tables, bool fill_cache) {
  return std::make_unique<LevelIterator>(std::move(files), tables, fill_cache);
}

namespace {

// Adds f's range tombstones to *source.
Status AddFileTombstones(TableCache* tables, const FileMetaData& f, TombstoneSource* source) {
  if (f.num_range_tombstones == 0) return Status::OK();
  const TableReader* table;
  std::shared_ptr<const TableReader> owner;
  Status s = tables->GetReader(f, &table, &owner);
  if (s.ok()) source->Add(table->fragmented_tombstones(), f.smallest, f.largest);
  return s;
}

}  // namespace

Status AddFileIterators(const std::shared_ptr<const ColumnFamilyFiles>& shared, TableCache* tables, bool fill_cache,
                        std::vector<std::unique_ptr<InternalIterator>>* iters,
                        std::vector<TombstoneSource>* tombstones, std::vector<size_t>* source_of) {
  const ColumnFamilyFiles& files = *shared;
  for (const FileRef& f : files.levels[0]) {
    if (f->num_entries > 0) {
      FileTables t;
      Status s = OpenFileTables(tables, f, &t);
      if (!s.ok()) return s;
      iters->push_back(std::make_unique<OwningTableIterator>(std::move(t), fill_cache));
      source_of->push_back(tombstones->size());
    }
    tombstones->emplace_back();
    Status s = AddFileTombstones(tables, *f, &tombstones->back());
    if (!s.ok()) return s;
  }
  for (int l = 1; l < kNumLevels; l++) {
    if (files.levels[l].empty()) continue;
    iters->push_back(NewLevelIterator(std::shared_ptr<const std::vector<FileRef>>(shared, &files.levels[l]), tables,
                                      fill_cache));
    source_of->push_back(tombstones->size());
    tombstones->emplace_back();
    for (const FileRef& f : files.levels[l]) {
      Status s = AddFileTombstones(tables, *f, &tombstones->back());
      if (!s.ok()) return s;
    }
  }
  return Status::OK();
}

}  // namespace lethe
