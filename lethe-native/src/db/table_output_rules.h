// What flushes and compactions tell the table writer about their outputs:
// how many deeper entries a range tombstone may cover, and which
// secondary-delete records the outputs have fully applied.
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "format/secondary_deletes.h"
#include "version/version_set.h"

namespace lethe {

// b for a range tombstone [lo, hi): the entries of files at `from_level` or
// deeper that it overlaps, files only partly inside counting half.
inline std::function<uint64_t(std::string_view, std::string_view)> CoveredEntriesEstimate(
    std::shared_ptr<const ColumnFamilyFiles> files, int from_level) {
  return [files = std::move(files), from_level](std::string_view lo, std::string_view hi) {
    uint64_t n = 0;
    if (files == nullptr) return n;
    for (int level = from_level; level < kNumLevels; level++) {
      for (const FileRef& f : files->Overlapping(level, lo, hi)) {
        bool inside = lo <= f->smallest && f->largest < hi;
        n += inside ? f->num_entries : f->num_entries / 2;
      }
    }
    return n;
  };
}

// The newest secondary-delete record that a flush or compaction applies in
// full: every record, unless a snapshot older than the newest one may keep
// entries that it hides.
inline uint64_t SecondaryAppliedSeq(const SecondaryDeletes* secondary,
                                    const std::vector<SequenceNumber>& snapshots) {
  if (secondary == nullptr || secondary->empty()) return 0;
  const SequenceNumber latest = secondary->LatestSequence();
  for (SequenceNumber s : snapshots) {
    if (s < latest) return 0;
  }
  return latest;
}

}  // namespace lethe
