#include "compaction/level_targets.h"

#include <algorithm>

namespace lethe {

namespace {

constexpr int kLast = kNumLevels - 1;

LevelTargets StaticTargets(const ColumnFamilyOptions& options, double t) {
  LevelTargets targets;
  double bytes = static_cast<double>(options.level1_bytes);
  for (int l = 1; l < kLast; l++) {
    targets.max_bytes[l] = static_cast<uint64_t>(bytes);
    bytes *= t;
  }
  return targets;
}

}  // namespace

LevelTargets ComputeLevelTargets(const ColumnFamilyFiles& files, const ColumnFamilyOptions& options) {
  const double t = static_cast<double>(std::max(2, options.size_ratio));
  if (!options.dynamic_level_bytes) return StaticTargets(options, t);
  uint64_t largest = 0;
  for (int l = 1; l <= kLast; l++) largest = std::max(largest, files.LevelBytes(l));
  LevelTargets targets;
  targets.base_level = kLast;
  double size = static_cast<double>(largest);
  while (targets.base_level > 1 && size > static_cast<double>(options.level1_bytes)) {
    targets.base_level--;
    size /= t;
  }
  for (int l = targets.base_level; l < kLast; l++) {
    targets.max_bytes[l] = static_cast<uint64_t>(std::max(size, 1.0));
    size *= t;
  }
  targets.level0_output = targets.base_level;
  for (int l = 1; l < targets.base_level; l++) {
    if (!files.levels[l].empty()) {
      targets.level0_output = l;
      break;
    }
  }
  return targets;
}

}  // namespace lethe
