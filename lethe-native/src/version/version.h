// Version: an immutable picture of every column family's files, level by
// level. Readers hold a shared_ptr to the version they started with; a file
// is deleted only when no live version references it.
//
// Invariants (checked by CheckInvariants in invariant builds):
//  1. level 0 files are ordered newest first (by largest sequence);
//  2. files in level >= 1 are sorted by smallest key and do not overlap;
//  3. for a sort key, entries in a lower-numbered level are newer.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "format/get_context.h"
#include "iterator/internal_iterator.h"
#include "format/range_tombstone.h"
#include "version/file_metadata.h"
#include "version/table_cache.h"
#include "version/version_edit.h"

namespace lethe {

struct ColumnFamilyFiles {
  ColumnFamilyDescriptor descriptor;
  std::vector<FileRef> levels[kNumLevels];
  SecondaryDeletes secondary;

  // Files in `level` overlapping [lo, hi] (inclusive sort keys).
  std::vector<FileRef> Overlapping(int level, std::string_view lo, std::string_view hi) const;
  // Whether any level deeper than `level` holds a file overlapping [lo, hi].
  bool DeeperOverlap(int level, std::string_view lo, std::string_view hi) const;
  // Whether a file older than `f` (of `level`) overlaps [lo, hi]: a later
  // level-0 file (level 0 is ordered newest first) or a deeper one.
  bool OlderOverlap(int level, const FileRef& f, std::string_view lo, std::string_view hi) const;
  uint64_t LevelBytes(int level) const;
  int DeepestNonEmptyLevel() const;  // -1 if no files
  Status CheckInvariants() const;
};

class Version {
 public:
  std::map<uint32_t, std::shared_ptr<const ColumnFamilyFiles>> cfs;

  const ColumnFamilyFiles* Find(uint32_t cf) const {
    auto it = cfs.find(cf);
    return it == cfs.end() ? nullptr : it->second.get();
  }

  // Applies an edit on top of this version.
  Status Apply(const VersionEdit& edit, std::shared_ptr<Version>* result) const;
};
using VersionRef = std::shared_ptr<const Version>;

// In a run of files sorted by key and disjoint (a level >= 1, or a part of
// one), the first file whose largest sort key is >= key (`end` if none).
using FileIter = std::vector<FileRef>::const_iterator;
inline FileIter FirstFileEndingAtOrAfter(FileIter begin, FileIter end, std::string_view key) {
  // Both sides string_view: clang 14 with libstdc++ 12 (the fuzz build)
  // rejects string < string_view in a lambda inside a template.
  return std::lower_bound(begin, end, key,
                          [](const FileRef& f, std::string_view k) { return std::string_view(f->largest) < k; });
}

// Calls fn(file) for every file that may hold `key`, newest first: the
// overlapping level-0 files, then at most one file per deeper level. Stops
// when fn returns true.
template <typename Fn>
void ForEachFileContaining(const ColumnFamilyFiles& files, std::string_view key, Fn&& fn) {
  for (const FileRef& f : files.levels[0]) {
    if (f->Contains(key) && fn(f)) return;
  }
  for (int l = 1; l < kNumLevels; l++) {
    const auto& level = files.levels[l];
    auto it = FirstFileEndingAtOrAfter(level.begin(), level.end(), key);
    if (it != level.end() && !(key < (*it)->smallest) && fn(*it)) return;
  }
}

// The readers of one file record (its table and, if it has one, its patch
// table), with the page overrides (dropped and patched pages) the record
// gives. Valid while the record lives; the owners keep readers that are not
// pinned to it. Moving it keeps the overrides valid.
struct FileReaders {
  const TableReader* table = nullptr;
  const TableReader* patch = nullptr;
  std::shared_ptr<const TableReader> table_owner, patch_owner;
  PageOverrides overrides;
};
// With TableOpen::kNever: NotFound, opening nothing, when the table or its
// patch table is not open now.
Status OpenFileReaders(TableCache* tables, const FileMetaData& f, FileReaders* out,
                       TableOpen open = TableOpen::kIfNeeded);

// The same, keeping the record alive too.
struct FileTables : FileReaders {
  FileRef file;
};
Status OpenFileTables(TableCache* tables, const FileRef& f, FileTables* out);

// Point lookup through a column family's files (after the memtables). With
// `delete_key` (ReadOptions::delete_key), files that cannot hold an entry
// of that delete key nor a tombstone are passed over.
Status GetFromFiles(const ColumnFamilyFiles& files, TableCache* tables, GetContext* ctx, bool fill_cache,
                    std::optional<uint64_t> delete_key = std::nullopt);
// Point lookups of a batch through a column family's files (`ctxs` sorted
// by key, none done): each level is walked once, and the keys that fall in
// one file are looked up together (TableReader::MultiGet). A key whose file
// cannot be read fails alone (GetContext::Fail).
void MultiGetFromFiles(const ColumnFamilyFiles& files, TableCache* tables, std::span<GetContext* const> ctxs,
                       bool fill_cache);

// Adds a tombstone source per level-0 file and per deeper level (the range
// tombstones of its files), and an iterator over each source's entries;
// source_of gets the index in *tombstones of each iterator's source. A
// level-0 file without point entries (range tombstones only) adds no
// iterator, so that a read does not merge a source that yields nothing.
// The level iterators share `files` (its level vectors) instead of copying them.
Status AddFileIterators(const std::shared_ptr<const ColumnFamilyFiles>& files, TableCache* tables, bool fill_cache,
                        std::vector<std::unique_ptr<InternalIterator>>* iters,
                        std::vector<TombstoneSource>* tombstones, std::vector<size_t>* source_of);

// Concatenates the files of one level >= 1, opening each lazily.
std::unique_ptr<InternalIterator> NewLevelIterator(std::vector<FileRef> files, TableCache* tables,
                                                   bool fill_cache);
// The same over a list someone else keeps: a read's iterator shares its
// version's level instead of copying a reference to each of its files.
std::unique_ptr<InternalIterator> NewLevelIterator(std::shared_ptr<const std::vector<FileRef>> files,
                                                   TableCache* tables, bool fill_cache);

}  // namespace lethe
