#include "compaction/time_ordered.h"

#include <algorithm>

#include "compaction/fade.h"

namespace lethe {

// Delete-driven compactions outrank every other, as in the leveled picker.
constexpr double kDeleteDrivenScore = 1e9;

bool TimeOrderedActive(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options) {
  return options.compaction_style == CompactionStyle::kTimeOrdered && files.DeepestNonEmptyLevel() <= 0;
}

static bool Young(const FileMetaData& f, const ColumnFamilyOptions& options) {
  return f.file_size < options.level1_bytes;
}

// Level-0 files [first, last] (positions, newest first) into one level-0 file.
static CompactionPlan PlanRun(const ColumnFamilyFiles& files, size_t first, size_t last, CompactionReason reason,
                              double score) {
  CompactionPlan plan;
  plan.level = 0;
  plan.output_level = 0;
  plan.reason = reason;
  plan.score = score;
  const auto& l0 = files.levels[0];
  plan.inputs[0].assign(l0.begin() + static_cast<std::ptrdiff_t>(first),
                        l0.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  return plan;
}

// FADE: the file whose budget expired first. Tombstones leave only with
// every older file merged in, unless the horizon covers them all; secondary
// deletes (and such tombstones) are applied by rewriting the file alone.
static std::optional<CompactionPlan> PickDeleteDrivenRun(const ColumnFamilyFiles& files,
                                                         const ColumnFamilyOptions& options, uint64_t now_us,
                                                         uint64_t oldest_snapshot) {
  if (options.delete_persistence_threshold_us == 0) return std::nullopt;
  const uint64_t deadline = FadeDeadlineUs(options, 0, 0);
  const auto& l0 = files.levels[0];
  std::optional<size_t> best;
  uint64_t best_expiry = UINT64_MAX;
  for (size_t i = 0; i < l0.size(); i++) {
    const uint64_t since = FadeInvalidSinceUs(files, *l0[i]);
    if (since == 0 || since + deadline > now_us) continue;
    // A rewrite could not drop what a snapshot still needs.
    if (oldest_snapshot < l0[i]->largest_seq) continue;
    if (since + deadline < best_expiry) {
      best_expiry = since + deadline;
      best = i;
    }
  }
  if (!best) return std::nullopt;
  const FileMetaData& f = *l0[*best];
  // Tombstones under the horizon leave with a rewrite of their file alone.
  const bool live_tombstones = f.num_point_tombstones + f.num_range_tombstones > 0 &&
                               !(f.tombstone_delete_key_max < files.secondary.horizon());
  const size_t last = live_tombstones ? l0.size() - 1 : *best;
  return PlanRun(files, *best, last, CompactionReason::kDeleteDriven,
                 kDeleteDrivenScore + static_cast<double>(now_us - best_expiry));
}

// The neighbours smallest together.
static CompactionPlan PlanSmallestPair(const ColumnFamilyFiles& files, double score) {
  const auto& l0 = files.levels[0];
  size_t best = 0;
  uint64_t best_bytes = UINT64_MAX;
  for (size_t i = 0; i + 1 < l0.size(); i++) {
    const uint64_t bytes = l0[i]->file_size + l0[i + 1]->file_size;
    if (bytes < best_bytes) {
      best_bytes = bytes;
      best = i;
    }
  }
  return PlanRun(files, best, best + 1, CompactionReason::kLevel0, score);
}

// The newest run of at least level0_compaction_trigger young neighbours.
static std::optional<CompactionPlan> PickYoungRun(const ColumnFamilyFiles& files,
                                                  const ColumnFamilyOptions& options) {
  const auto& l0 = files.levels[0];
  const size_t trigger = static_cast<size_t>(std::max(2, options.level0_compaction_trigger));
  size_t i = 0;
  while (i < l0.size()) {
    if (!Young(*l0[i], options)) {
      i++;
      continue;
    }
    size_t end = i;
    while (end + 1 < l0.size() && Young(*l0[end + 1], options)) end++;
    const size_t length = end - i + 1;
    if (length >= trigger) {
      return PlanRun(files, i, end, CompactionReason::kLevel0, static_cast<double>(length) / trigger);
    }
    i = end + 1;
  }
  return std::nullopt;
}

std::optional<CompactionPlan> PickTimeOrderedCompaction(const ColumnFamilyFiles& files,
                                                        const ColumnFamilyOptions& options, uint64_t now_us,
                                                        uint64_t oldest_snapshot) {
  if (auto plan = PickDeleteDrivenRun(files, options, now_us, oldest_snapshot)) return plan;
  const size_t count = files.levels[0].size();
  const size_t max_files = static_cast<size_t>(std::max(2, options.time_ordered_max_files));
  if (count >= max_files) return PlanSmallestPair(files, static_cast<double>(count) / max_files);
  return PickYoungRun(files, options);
}

bool Level0Stalls(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options) {
  const size_t count = files.levels[0].size();
  if (!TimeOrderedActive(files, options)) return static_cast<int>(count) >= options.level0_stop_writes_trigger;
  // Past time_ordered_max_files the picker always has a merge: writes wait
  // only when it falls that far behind (a stall the picker cannot end
  // would never end).
  return count >= static_cast<size_t>(std::max(2, options.time_ordered_max_files)) +
                      static_cast<size_t>(std::max(1, options.level0_stop_writes_trigger));
}

}  // namespace lethe
