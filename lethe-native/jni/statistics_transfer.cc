#include "statistics_transfer.h"

#include <cstring>
#include <stdexcept>

namespace lethe_jni {

namespace {

int64_t Bits(double d) {
  int64_t bits;
  static_assert(sizeof(bits) == sizeof(d));
  std::memcpy(&bits, &d, sizeof(bits));
  return bits;
}

void EncodeLevel(const lethe::LevelStatistics& l, std::vector<int64_t>* v) {
  const size_t start = v->size();
  for (uint64_t x : {l.files, l.bytes, l.entries, l.point_tombstones, l.range_tombstones, l.oldest_tombstone_age_us,
                     l.estimated_invalidated}) {
    v->push_back(static_cast<int64_t>(x));
  }
  for (uint64_t h : l.tombstone_age_histogram) v->push_back(static_cast<int64_t>(h));
  if (v->size() - start != static_cast<size_t>(kLevelFields)) throw std::logic_error("level fields miscounted");
}

void EncodeColumnFamily(const lethe::ColumnFamilyStatistics& cf, std::vector<int64_t>* v) {
  const size_t start = v->size();
  v->push_back(cf.id);
  for (uint64_t x : {cf.memtable_bytes, cf.memtable_entries, cf.delete_persistence_threshold_us,
                     cf.oldest_tombstone_age_us}) {
    v->push_back(static_cast<int64_t>(x));
  }
  v->push_back(Bits(cf.space_amplification_estimate));
  for (uint64_t x : {cf.horizon, cf.secondary_delete_records, cf.pages_per_tile}) v->push_back(static_cast<int64_t>(x));
  if (v->size() - start != static_cast<size_t>(kColumnFamilyFields)) {
    throw std::logic_error("column family fields miscounted");
  }
  v->push_back(static_cast<int64_t>(cf.levels.size()));
  for (const lethe::LevelStatistics& l : cf.levels) EncodeLevel(l, v);
}

}  // namespace

std::vector<int64_t> EncodeStatistics(const lethe::DbStatistics& st) {
  std::vector<int64_t> v = {kStatisticsTransferVersion, lethe::kTickerCount};
  for (int t = 0; t < lethe::kTickerCount; t++) v.push_back(static_cast<int64_t>(st.Get(static_cast<lethe::Ticker>(t))));
  v.push_back(static_cast<int64_t>(st.column_families.size()));
  for (const lethe::ColumnFamilyStatistics& cf : st.column_families) EncodeColumnFamily(cf, &v);
  return v;
}

}  // namespace lethe_jni
