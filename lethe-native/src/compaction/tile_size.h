// Choosing the delete tile size h automatically from the workload.
//
// Between two secondary range deletes, a workload runs Q point lookups (each
// probes h Bloom filters per level instead of one, paying a false positive
// with probability FPR per extra probe) and S short range lookups (each
// reads h pages per level instead of one). A secondary range delete reads
// and writes about N/B pages with h = 1 and N/(B h) with tiles of h pages.
// Tiles pay off while
//
//   Q * FPR * (h - 1) + S * L * (h - 1)  <  N/B * (h - 1) / h,
//
// that is h < (N/B) / (Q * FPR + S * L): the largest such h is the choice.
#pragma once

#include <cstdint>

namespace lethe {

constexpr int kMaxAutoTileSize = 256;

// pages: N/B, the pages of the family's tree; point_lookups, range_lookups
// and secondary_deletes: operations observed (counts, any common window);
// fpr: the Bloom filters' false-positive rate; levels: L.
// Returns h in [1, kMaxAutoTileSize]; 1 without secondary deletes.
int AutoTileSize(uint64_t pages, uint64_t point_lookups, uint64_t range_lookups,
                 uint64_t secondary_deletes, double fpr, int levels);

// The false-positive rate of a Bloom filter with bits_per_key bits per key
// and the optimal number of hash functions (1 without filters).
double BloomFalsePositiveRate(int bits_per_key);

}  // namespace lethe
