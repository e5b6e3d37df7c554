// The compaction picker: a pure function of a column family's files, its
// options, per-level compaction pointers, a time and the oldest snapshot.
// No I/O, no locks, no clock.
//
// Leveled LSM with size ratio T: level 0 is compacted when it
// holds level0_compaction_trigger files; level i >= 1 when its bytes exceed
// its target (level_targets.h). File-granular: one file of level i (round
// robin over the key space) plus the overlapping files of level i+1.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lethe/options.h"
#include "lethe/statistics.h"
#include "version/version.h"

namespace lethe {

struct CompactionPlan {
  int level = 0;         // input level
  int output_level = 1;
  std::vector<FileRef> inputs[2];  // level, output_level
  CompactionReason reason = CompactionReason::kSaturation;
  double score = 0;
  // False when the input must be rewritten even without overlap (FADE: its
  // tombstones would reach the last level unchanged).
  bool allow_trivial_move = true;

  // The bytes of the input files.
  uint64_t InputBytes() const {
    uint64_t bytes = 0;
    for (const auto& level : inputs) {
      for (const FileRef& f : level) bytes += f->file_size;
    }
    return bytes;
  }

  // One input file and nothing to merge with: move it down unchanged.
  bool IsTrivialMove() const {
    return allow_trivial_move && inputs[0].size() == 1 && inputs[1].empty() && level != output_level;
  }
};

// Per level: where the last compaction of that level ended (its largest key).
struct CompactionPointers {
  std::string after[kNumLevels];
};

// The most urgent compaction, or nothing if every level is within budget.
// With FADE on (options.delete_persistence_threshold_us > 0), a file whose
// tombstones outlived their level budget at `now_us` comes first (fade.h),
// and saturation compactions choose files by options.fade_file_pick;
// `oldest_snapshot` is the oldest live snapshot's sequence number
// (kMaxSequenceNumber without snapshots).
std::optional<CompactionPlan> PickCompaction(const ColumnFamilyFiles& files,
                                             const ColumnFamilyOptions& options,
                                             const CompactionPointers& pointers, uint64_t now_us,
                                             uint64_t oldest_snapshot);

// The smallest and largest sort key of `files` (not empty).
void CompactionKeyRange(const std::vector<FileRef>& files, std::string* lo, std::string* hi);

// Compaction of every file of `level` with the overlapping files of
// `output_level` (a manual, full compaction step).
CompactionPlan PlanLevelCompaction(const ColumnFamilyFiles& files, int level, int output_level,
                                   CompactionReason reason);

}  // namespace lethe
