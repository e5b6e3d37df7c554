// How statistics cross to Java: one flat array of longs, decoded by
// io.lethe.engine.Statistics.decode.
//
//   version | ticker count | tickers in LETHE_TICKERS order |
//   family count | per family: kColumnFamilyFields fields | level count |
//                  per level: kLevelFields fields
//
// Both sides check the version, every count and the total length, so a
// stale native library fails with a clear error instead of shifted values.
// Tickers may be appended without a version change (the count says how
// many follow; Java's Ticker enum is generated from the same list); a
// change to the family or level fields moves the version.
#pragma once

#include <cstdint>
#include <vector>

#include "lethe/statistics.h"

namespace lethe_jni {

constexpr int64_t kStatisticsTransferVersion = 2;
// id, memtable bytes, memtable entries, D_th (µs), oldest tombstone age (µs),
// space amplification (IEEE 754 bits), horizon, records, pages per tile.
constexpr int kColumnFamilyFields = 9;
// files, bytes, entries, point tombstones, range tombstones, oldest tombstone
// age (µs), estimated invalidated entries, then the tombstone age histogram.
constexpr int kLevelFields = 7 + lethe::kTombstoneAgeBuckets;

std::vector<int64_t> EncodeStatistics(const lethe::DbStatistics& st);

}  // namespace lethe_jni
