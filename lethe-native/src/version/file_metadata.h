// FileMetaData: what the manifest remembers about one table file. Every
// field is persisted (version_edit.cc), so the FADE statistics survive
// reopen and checkpoints.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lethe/options.h"
#include "sst/table_format.h"
#include "version/pinned_reader.h"

namespace lethe {

struct FileMetaData {
  uint64_t number = 0;
  uint64_t file_size = 0;
  // Sort-key bounds, inclusive, covering points and range tombstones.
  std::string smallest;
  std::string largest;
  uint64_t smallest_seq = 0;
  uint64_t largest_seq = 0;
  uint64_t num_entries = 0;  // point entries of every kind
  uint64_t num_point_tombstones = 0;
  uint64_t num_range_tombstones = 0;
  uint64_t num_merges = 0;
  uint64_t delete_key_min = kMaxDeleteKey;
  uint64_t delete_key_max = 0;
  // The largest delete key of the file's point tombstones: once a horizon
  // is above it, every tombstone of the file is gone for its readers and
  // leaves with its page. kMaxDeleteKey: not known, or a range tombstone
  // (which carries no delete key); 0 without tombstones.
  uint64_t tombstone_delete_key_max = kMaxDeleteKey;
  // When the oldest tombstone in the file was written (0: no tombstone).
  uint64_t oldest_tombstone_time_us = 0;
  // b: the entries this file's tombstones invalidate, estimated when it was
  // written (point tombstones, plus for range tombstones the entries of the
  // deeper files they overlapped). FADE's SD file choice ranks by it.
  uint64_t estimated_invalidated = 0;
  uint64_t created_time_us = 0;
  uint64_t raw_key_bytes = 0;
  uint64_t raw_value_bytes = 0;
  // Pages dropped by secondary deletes (indexes in file order, ascending):
  // the file stays immutable, readers skip them, and the local copy may have
  // a hole there. num_entries and the delete-key bounds describe the pages
  // that remain.
  std::vector<uint32_t> dropped_pages;
  // Secondary-delete records with a sequence up to this one were applied
  // when the file was written (no snapshot kept anything they hide): FADE
  // counts only later records as invalidating it.
  uint64_t secondary_applied_seq = 0;
  // Partly covered pages rewritten without rewriting the file (KiWi's
  // partial page drops): page patched_pages[k] of this file is replaced by
  // the single page of tile k of the patch table (patch_file, patch_size
  // bytes), which holds the page's surviving entries. 0: no patch.
  uint64_t patch_file = 0;
  uint64_t patch_size = 0;
  std::vector<uint32_t> patched_pages;
  // Not persisted: the file's open reader, when every table stays open.
  PinnedReader reader;

  // The position of `index` in patched_pages, or -1.
  int PatchSlot(uint32_t index) const {
    auto it = std::lower_bound(patched_pages.begin(), patched_pages.end(), index);
    return it != patched_pages.end() && *it == index ? static_cast<int>(it - patched_pages.begin()) : -1;
  }

  bool PageDropped(uint32_t index) const {
    return !dropped_pages.empty() &&
           std::binary_search(dropped_pages.begin(), dropped_pages.end(), index);
  }

  // Whether readers of this record read page `index` from the file itself
  // (neither dropped nor replaced by the patch table).
  bool ReadsPageFromFile(uint32_t index) const { return !PageDropped(index) && PatchSlot(index) < 0; }

  // Sets the entry counts and raw sizes from a table's properties.
  void SetCounts(const TableProperties& p) {
    num_entries = p.entries;
    num_point_tombstones = p.point_tombstones;
    num_range_tombstones = p.range_tombstones;
    num_merges = p.merges;
    raw_key_bytes = p.raw_key_bytes;
    raw_value_bytes = p.raw_value_bytes;
  }

  bool Overlaps(std::string_view lo, std::string_view hi) const {  // inclusive bounds
    return !(largest < lo || hi < smallest);
  }
  bool Contains(std::string_view key) const { return smallest <= key && key <= largest; }
  // Whether an entry with delete key dk, or a tombstone (of any delete key),
  // may be in the file.
  bool MayHoldDeleteKey(uint64_t dk) const {
    return num_point_tombstones != 0 || num_range_tombstones != 0 || (delete_key_min <= dk && dk <= delete_key_max);
  }
};
using FileRef = std::shared_ptr<const FileMetaData>;

constexpr int kNumLevels = 7;

}  // namespace lethe
