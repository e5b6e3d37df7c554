// DBImpl: statistics and properties.
#include <cinttypes>
#include <cstdio>

#include "compaction/table_writer.h"
#include "db/db_impl.h"
#include "sst/compression.h"

namespace lethe {

namespace {

uint64_t AgeUs(uint64_t now, uint64_t t) { return t == 0 || now < t ? 0 : now - t; }

// Bytes of a family's table files, over every level.
uint64_t FileBytes(const ColumnFamilyStatistics& cs) {
  uint64_t sum = 0;
  for (const LevelStatistics& ls : cs.levels) sum += ls.bytes;
  return sum;
}

// What the files of one level hold; tombstone ages as shares of D_th (`threshold_us`, 0: FADE off).
LevelStatistics LevelStatisticsOf(const std::vector<FileRef>& files, int level, uint64_t now,
                                  uint64_t threshold_us) {
  LevelStatistics ls;
  ls.level = level;
  for (const FileRef& f : files) {
    ls.files++;
    ls.bytes += f->file_size;
    ls.entries += f->num_entries;
    ls.point_tombstones += f->num_point_tombstones;
    ls.range_tombstones += f->num_range_tombstones;
    ls.estimated_invalidated += f->estimated_invalidated;
    const uint64_t tombstones = f->num_point_tombstones + f->num_range_tombstones;
    if (tombstones == 0) continue;
    const uint64_t age = AgeUs(now, f->oldest_tombstone_time_us);
    ls.oldest_tombstone_age_us = std::max(ls.oldest_tombstone_age_us, age);
    if (threshold_us > 0) {
      const int bucket = static_cast<int>(std::min<uint64_t>(kTombstoneAgeBuckets - 1, age * 4 / threshold_us));
      ls.tombstone_age_histogram[bucket] += tombstones;
    }
  }
  return ls;
}

}  // namespace

ColumnFamilyStatistics DBImpl::ColumnFamilyStatisticsOf(const ColumnFamilyData& cfd, uint64_t now) {
  ColumnFamilyStatistics cs;
  cs.id = cfd.id;
  cs.name = cfd.name;
  for (const MemTable* m : cfd.memtables()) {
    if (m == nullptr) continue;
    cs.memtable_bytes += m->ApproximateMemoryUsage();
    cs.memtable_entries += m->num_entries();
  }
  const ColumnFamilyFiles& files = *cfd.super_version->files;
  cs.horizon = files.secondary.horizon();
  cs.secondary_delete_records = files.secondary.horizons.size() + files.secondary.ranges.size();
  cs.pages_per_tile = static_cast<uint64_t>(TileSizeFor(cfd));
  cs.delete_persistence_threshold_us = cfd.options.delete_persistence_threshold_us;
  cs.oldest_tombstone_age_us = std::max(AgeUs(now, cfd.first_tombstone_time_us),
                                        AgeUs(now, cfd.imm ? cfd.imm_first_tombstone_time_us : 0));
  uint64_t entries = 0, dead = 0;
  for (int level = 0; level <= std::max(0, files.DeepestNonEmptyLevel()); level++) {
    cs.levels.push_back(LevelStatisticsOf(files.levels[level], level, now, cs.delete_persistence_threshold_us));
    const LevelStatistics& ls = cs.levels.back();
    cs.oldest_tombstone_age_us = std::max(cs.oldest_tombstone_age_us, ls.oldest_tombstone_age_us);
    entries += ls.entries;
    dead += ls.point_tombstones + ls.estimated_invalidated;
  }
  if (entries > dead) cs.space_amplification_estimate = static_cast<double>(entries) / (entries - dead);
  return cs;
}

DbStatistics DBImpl::GetStatistics() {
  DbStatistics st;
  {
    std::lock_guard<std::mutex> l(mu_);
    const uint64_t now = clock_->NowMicros();
    for (const auto& [id, cfd] : cfds_) st.column_families.push_back(ColumnFamilyStatisticsOf(*cfd, now));
    // After the files, under the same lock: a flush or compaction counts
    // itself in the tickers under mu_ together with installing its files, so
    // the counts cover at least what the files show.
    for (int t = 0; t < kTickerCount; t++) st.Set(static_cast<Ticker>(t), tickers_[t].load());
    const VersionSet::HeldVersions held = versions_->GetHeldVersions();
    st.held_versions = held.count;
    st.oldest_held_version_age_us = held.oldest_age_us;
    st.obsolete_file_bytes_held = held.obsolete_file_bytes;
    if (running_compaction_.since_us != 0) {
      st.running_compaction_age_us = std::max<uint64_t>(1, AgeUs(now, running_compaction_.since_us));
      st.running_compaction_input_bytes = running_compaction_.input_bytes;
    }
  }
  st.open_iterators = open_iterators_.value();
  st.open_checkpoints = open_checkpoints_.value();
  // Not a counter: what the files hold now (set after the counters, which
  // would overwrite it).
  for (const ColumnFamilyStatistics& cs : st.column_families) st.live_bytes += FileBytes(cs);
  st.bytes_read_table = read_counters_.bytes_read.Sum();
  st.bloom_useful = read_counters_.bloom_useful.Sum();
  st.table_opens = read_counters_.opens.Sum();
  st.index_partition_reads = read_counters_.partition_reads.Sum();
  if (PageCache* pages = budget_->page_cache()) {
    st.page_cache_hits = pages->hits();
    st.page_cache_misses = pages->misses();
  }
  const MemoryBudget::Usage memory = budget_->GetUsage();
  st.memory_budget_bytes = memory.capacity;
  st.memory_page_cache_bytes = memory.page_cache;
  st.memory_write_buffer_bytes = memory.write_buffers;
  st.memory_table_reader_bytes = memory.table_readers;
  st.memory_pinned_table_reader_bytes = memory.pinned_table_readers;
  return st;
}

// The properties that show a family's options as it was created:
// "lethe.pages-per-tile" (0 when the engine chooses h for each new file),
// "lethe.compression" (its compression, then that of its last level) and
// "lethe.compaction-style"; null for any other name.
static std::string (*CreatedOptionProperty(std::string_view property))(const ColumnFamilyOptions&) {
  if (property == "lethe.pages-per-tile") {
    return [](const ColumnFamilyOptions& o) { return std::to_string(o.pages_per_tile); };
  }
  if (property == "lethe.compression") {
    return [](const ColumnFamilyOptions& o) {
      return std::string(CompressionName(o.compression)) + "," +
             CompressionName(OutputCompression(o, /*bottommost=*/true, /*flush=*/false));
    };
  }
  if (property == "lethe.flush-compression") {
    return [](const ColumnFamilyOptions& o) {
      return std::string(CompressionName(OutputCompression(o, /*bottommost=*/false, /*flush=*/true)));
    };
  }
  if (property == "lethe.compaction-style") {
    return [](const ColumnFamilyOptions& o) {
      return std::string(o.compaction_style == CompactionStyle::kTimeOrdered ? "time-ordered" : "leveled");
    };
  }
  return nullptr;
}

bool DBImpl::GetProperty(ColumnFamilyHandle* cf, std::string_view property, std::string* value) {
  value->clear();
  DbStatistics st = GetStatistics();
  const ColumnFamilyStatistics* cs = nullptr;
  for (const auto& c : st.column_families) {
    if (cf != nullptr && c.id == cf->id()) cs = &c;
  }
  if (property == "lethe.stats") {
    char buf[512];
    std::snprintf(buf, sizeof(buf),
                  "written: wal %" PRIu64 " flush %" PRIu64 " compaction %" PRIu64 " user %" PRIu64
                  " | flushes %" PRIu64 " compactions l0 %" PRIu64 " saturation %" PRIu64
                  " manual %" PRIu64 " move %" PRIu64 " delete-driven %" PRIu64 " page-rewrite %" PRIu64
                  " | stalls %" PRIu64 "\n",
                  st.bytes_written_wal, st.bytes_written_flush, st.bytes_written_compaction,
                  st.user_bytes_written, st.flushes, st.compactions_level0, st.compactions_saturation,
                  st.compactions_manual, st.trivial_moves, st.compactions_delete_driven,
                  st.compactions_page_rewrite, st.write_stalls);
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
    *value = std::to_string(FileBytes(*cs));
    return true;
  }
  if (property == "lethe.oldest-delete-key") {
    // The smallest delete key of any remaining page in the family's files
    // (kMaxDeleteKey when they hold none): how far back the disk holds data.
    std::lock_guard<std::mutex> l(mu_);
    Status s;
    ColumnFamilyData* cfd = Resolve(cf, &s);
    if (cfd == nullptr) return false;
    uint64_t oldest = kMaxDeleteKey;
    for (const auto& level : cfd->super_version->files->levels) {
      for (const FileRef& f : level) oldest = std::min(oldest, f->delete_key_min);
    }
    *value = std::to_string(oldest);
    return true;
  }
  // Options as the family was created (and its record in the manifest keeps).
  if (auto text = CreatedOptionProperty(property); text != nullptr) {
    std::lock_guard<std::mutex> l(mu_);
    Status s;
    ColumnFamilyData* cfd = Resolve(cf, &s);
    if (cfd == nullptr) return false;
    *value = text(cfd->options);
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
  if (property == "lethe.estimate-num-keys") {
    // Entries of memtables and files, less two per point tombstone in a file
    // (the tombstone and what it deletes); overwrites are counted twice.
    uint64_t entries = cs->memtable_entries, tombstones = 0;
    for (const auto& ls : cs->levels) {
      entries += ls.entries;
      tombstones += ls.point_tombstones;
    }
    *value = std::to_string(entries > 2 * tombstones ? entries - 2 * tombstones : 0);
    return true;
  }
  if (property == "lethe.num-entries-active-mem") {
    *value = std::to_string(cs->memtable_entries);
    return true;
  }
  return false;
}

}  // namespace lethe
