// DBImpl: statistics and properties.
#include <cinttypes>
#include <cstdio>

#include "db/db_impl.h"

namespace lethe {

DbStatistics DBImpl::GetStatistics() {
  DbStatistics st;
  for (int t = 0; t < kTickerCount; t++) st.Set(static_cast<Ticker>(t), tickers_[t].load());
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [id, cfd] : cfds_) {
      ColumnFamilyStatistics cs;
      cs.id = id;
      cs.name = cfd->name;
      cs.memtable_bytes = cfd->mem->ApproximateMemoryUsage() + (cfd->imm ? cfd->imm->ApproximateMemoryUsage() : 0);
      cs.memtable_entries = cfd->mem->num_entries() + (cfd->imm ? cfd->imm->num_entries() : 0);
      const ColumnFamilyFiles& files = *cfd->super_version->files;
      cs.horizon = files.secondary.horizon();
      cs.secondary_delete_records = files.secondary.horizons.size() + files.secondary.ranges.size();
      cs.pages_per_tile = static_cast<uint64_t>(TileSizeFor(*cfd));
      const uint64_t now = clock_->NowMicros();
      const uint64_t threshold = cfd->options.delete_persistence_threshold_us;
      auto age = [now](uint64_t t) { return t == 0 || now < t ? 0 : now - t; };
      cs.delete_persistence_threshold_us = threshold;
      cs.oldest_tombstone_age_us =
          std::max(age(cfd->first_tombstone_time_us), age(cfd->imm ? cfd->imm_first_tombstone_time_us : 0));
      uint64_t entries = 0, dead = 0;
      int deepest = std::max(0, files.DeepestNonEmptyLevel());
      for (int level = 0; level <= deepest; level++) {
        LevelStatistics ls;
        ls.level = level;
        for (const FileRef& f : files.levels[level]) {
          ls.files++;
          ls.bytes += f->file_size;
          ls.entries += f->num_entries;
          ls.point_tombstones += f->num_point_tombstones;
          ls.range_tombstones += f->num_range_tombstones;
          ls.estimated_invalidated += f->estimated_invalidated;
          uint64_t tombstones = f->num_point_tombstones + f->num_range_tombstones;
          if (tombstones == 0) continue;
          uint64_t a = age(f->oldest_tombstone_time_us);
          ls.oldest_tombstone_age_us = std::max(ls.oldest_tombstone_age_us, a);
          if (threshold > 0) {
            int bucket = static_cast<int>(std::min<uint64_t>(kTombstoneAgeBuckets - 1, a * 4 / threshold));
            ls.tombstone_age_histogram[bucket] += tombstones;
          }
        }
        cs.oldest_tombstone_age_us = std::max(cs.oldest_tombstone_age_us, ls.oldest_tombstone_age_us);
        entries += ls.entries;
        dead += ls.point_tombstones + ls.estimated_invalidated;
        st.live_bytes += ls.bytes;
        cs.levels.push_back(ls);
      }
      if (entries > dead) cs.space_amplification_estimate = static_cast<double>(entries) / (entries - dead);
      st.column_families.push_back(std::move(cs));
    }
  }
  st.bytes_read_table = read_counters_.bytes_read.load();
  st.bloom_useful = read_counters_.bloom_useful.load();
  if (page_cache_) {
    st.page_cache_hits = page_cache_->hits();
    st.page_cache_misses = page_cache_->misses();
  }
  return st;
}

bool DBImpl::GetProperty(ColumnFamilyHandle* cf, std::string_view property, std::string* value) {
  value->clear();
  DbStatistics st = GetStatistics();
  const ColumnFamilyStatistics* cs = nullptr;
  for (const auto& c : st.column_families) {
    if (cf != nullptr && c.id == cf->id()) cs = &c;
  }
  if (property == "lethe.stats") {
    char buf[320];
    std::snprintf(buf, sizeof(buf),
                  "written: wal %" PRIu64 " flush %" PRIu64 " compaction %" PRIu64 " user %" PRIu64
                  " | flushes %" PRIu64 " compactions l0 %" PRIu64 " saturation %" PRIu64
                  " manual %" PRIu64 " move %" PRIu64 " delete-driven %" PRIu64 " | stalls %" PRIu64 "\n",
                  st.bytes_written_wal, st.bytes_written_flush, st.bytes_written_compaction,
                  st.user_bytes_written, st.flushes, st.compactions_level0, st.compactions_saturation,
                  st.compactions_manual, st.trivial_moves, st.compactions_delete_driven, st.write_stalls);
    value->append(buf);
    for (const auto& c : st.column_families) {
      std::snprintf(buf, sizeof(buf), "column family %s (id %u): memtable %" PRIu64 " bytes, %" PRIu64 " entries\n",
                    c.name.c_str(), c.id, c.memtable_bytes, c.memtable_entries);
      value->append(buf);
      value->append("  level  files        bytes      entries   tombstones  range-tombstones\n");
      for (const auto& ls : c.levels) {
        std::snprintf(buf, sizeof(buf), "  %5d %6" PRIu64 " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %17" PRIu64 "\n",
                      ls.level, ls.files, ls.bytes, ls.entries, ls.point_tombstones, ls.range_tombstones);
        value->append(buf);
      }
    }
    return true;
  }
  if (cs == nullptr) return false;
  if (property.starts_with("lethe.num-files-at-level")) {
    std::string_view n = property.substr(std::string_view("lethe.num-files-at-level").size());
    if (n.size() != 1 || n[0] < '0' || n[0] >= '0' + kNumLevels) return false;
    int level = n[0] - '0';
    *value = std::to_string(level < static_cast<int>(cs->levels.size()) ? cs->levels[level].files : 0);
    return true;
  }
  if (property == "lethe.total-bytes") {
    uint64_t sum = 0;
    for (const auto& ls : cs->levels) sum += ls.bytes;
    *value = std::to_string(sum);
    return true;
  }
  if (property == "lethe.files") {
    // One line per table file of the family: level, number, entries,
    // tombstones and the age of the oldest one (0: none), delete-key bounds
    // of the remaining pages, dropped pages.
    std::lock_guard<std::mutex> l(mu_);
    const uint64_t now = clock_->NowMicros();
    Status s;
    ColumnFamilyData* cfd = Resolve(cf, &s);
    if (cfd == nullptr) return false;
    const ColumnFamilyFiles& files = *cfd->super_version->files;
    value->clear();
    for (int level = 0; level < kNumLevels; level++) {
      for (const FileRef& f : files.levels[level]) {
        *value += "L" + std::to_string(level) + " #" + std::to_string(f->number) + " entries=" +
                  std::to_string(f->num_entries) +
                  " tombstones=" + std::to_string(f->num_point_tombstones + f->num_range_tombstones) +
                  " tombstone-age-us=" +
                  std::to_string(f->oldest_tombstone_time_us == 0 || now < f->oldest_tombstone_time_us
                                     ? 0
                                     : now - f->oldest_tombstone_time_us) +
                  " delete-keys=[" + std::to_string(f->delete_key_min) + "," +
                  std::to_string(f->delete_key_max) + "] dropped=[";
        for (size_t i = 0; i < f->dropped_pages.size(); i++) {
          *value += (i > 0 ? "," : "") + std::to_string(f->dropped_pages[i]);
        }
        *value += "]";
        if (f->patch_file != 0) {
          *value += " patch=#" + std::to_string(f->patch_file) + " patched=[";
          for (size_t i = 0; i < f->patched_pages.size(); i++) {
            *value += (i > 0 ? "," : "") + std::to_string(f->patched_pages[i]);
          }
          *value += "]";
        }
        *value += "\n";
      }
    }
    return true;
  }
  if (property == "lethe.num-entries-active-mem") {
    *value = std::to_string(cs->memtable_entries);
    return true;
  }
  return false;
}

}  // namespace lethe
