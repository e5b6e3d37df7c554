#include "compaction/tile_size.h"

#include <algorithm>
#include <cmath>

namespace lethe {

int AutoTileSize(uint64_t pages, uint64_t point_lookups, uint64_t range_lookups,
                 uint64_t secondary_deletes, double fpr, int levels) {
  if (secondary_deletes == 0) return 1;
  const double d = static_cast<double>(secondary_deletes);
  const double cost = static_cast<double>(point_lookups) / d * fpr +
                      static_cast<double>(range_lookups) / d * std::max(1, levels);
  const double h = cost <= 0 ? kMaxAutoTileSize : static_cast<double>(pages) / cost;
  return static_cast<int>(std::clamp(std::floor(h), 1.0, static_cast<double>(kMaxAutoTileSize)));
}

double BloomFalsePositiveRate(int bits_per_key) {
  if (bits_per_key <= 0) return 1.0;
  // (1 - e^(-k/b))^k with k = b ln 2 is 0.6185^b.
  return std::pow(0.6185, bits_per_key);
}

}  // namespace lethe
