#include "compaction/compaction_picker.h"

#include <algorithm>

#include "compaction/fade.h"
#include "compaction/level_targets.h"
#include "compaction/time_ordered.h"

namespace lethe {

// A level above the base still holding files outranks every level over its
// target: level 0 cannot skip it.
constexpr double kDrainScore = 1e6;

void CompactionKeyRange(const std::vector<FileRef>& files, std::string* lo, std::string* hi) {
  *lo = files.front()->smallest;
  *hi = files.front()->largest;
  for (const FileRef& f : files) {
    if (f->smallest < *lo) *lo = f->smallest;
    if (*hi < f->largest) *hi = f->largest;
  }
}

CompactionPlan PlanLevelCompaction(const ColumnFamilyFiles& files, int level, int output_level,
                                   CompactionReason reason) {
  CompactionPlan plan;
  plan.level = level;
  plan.output_level = output_level;
  plan.reason = reason;
  plan.inputs[0] = files.levels[level];
  if (!plan.inputs[0].empty() && output_level != level) {
    std::string lo, hi;
    CompactionKeyRange(plan.inputs[0], &lo, &hi);
    plan.inputs[1] = files.Overlapping(output_level, lo, hi);
  }
  return plan;
}

std::optional<CompactionPlan> PickCompaction(const ColumnFamilyFiles& files,
                                             const ColumnFamilyOptions& options,
                                             const CompactionPointers& pointers, uint64_t now_us,
                                             uint64_t oldest_snapshot) {
  if (TimeOrderedActive(files, options)) return PickTimeOrderedCompaction(files, options, now_us, oldest_snapshot);
  const LevelTargets targets = ComputeLevelTargets(files, options);
  if (auto plan = PickDeleteDriven(files, options, targets, now_us, oldest_snapshot)) return plan;
  int best_level = -1;
  double best_score = 1.0;
  double l0 = static_cast<double>(files.levels[0].size()) /
              std::max(1, options.level0_compaction_trigger);
  if (l0 >= best_score) {
    best_level = 0;
    best_score = l0;
  }
  for (int l = 1; l < kNumLevels - 1; l++) {
    if (files.levels[l].empty()) continue;
    double score = targets.Draining(l) ? kDrainScore
                                       : static_cast<double>(files.LevelBytes(l)) /
                                             static_cast<double>(std::max<uint64_t>(1, targets.max_bytes[l]));
    if (score > best_score) {
      best_level = l;
      best_score = score;
    }
  }
  if (best_level < 0) return std::nullopt;

  if (best_level == 0) {
    const int output = FadeLevel0Output(files, options, targets, now_us);
    CompactionPlan plan = PlanLevelCompaction(files, 0, output, CompactionReason::kLevel0);
    plan.score = best_score;
    // Straight into the last level, its tombstones must not arrive unchanged.
    plan.allow_trivial_move = output == targets.level0_output;
    return plan;
  }
  FileRef file;
  if (options.delete_persistence_threshold_us > 0) {
    file = PickFadeSaturationFile(files, options, best_level);
  } else {
    // Round robin: the first file starting after where the last one ended.
    const auto& level = files.levels[best_level];
    const std::string& after = pointers.after[best_level];
    auto it = std::find_if(level.begin(), level.end(),
                           [&](const FileRef& f) { return after.empty() || f->smallest > after; });
    file = it == level.end() ? level.front() : *it;
  }
  CompactionPlan plan;
  plan.level = best_level;
  plan.output_level = best_level + 1;
  plan.reason = CompactionReason::kSaturation;
  plan.score = best_score;
  plan.inputs[0].push_back(file);
  plan.inputs[1] = files.Overlapping(best_level + 1, file->smallest, file->largest);
  return plan;
}

}  // namespace lethe
