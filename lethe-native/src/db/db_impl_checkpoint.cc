// DBImpl: checkpoints, live-file listing, statistics and properties.
#include <cinttypes>
#include <cstdio>

#include "db/db_impl.h"
#include "version/version_edit.h"
#include "wal/log_writer.h"
#include "util/kill_point.h"

namespace lethe {

Status DBImpl::Checkpoint(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("checkpoint directory must not be empty");
  if (env_->FileExists(dir)) return Status::InvalidArgument(dir, "checkpoint directory exists");
  Status s = Flush();
  if (!s.ok()) return s;

  // Capture a consistent state; holding the version keeps its files alive.
  VersionEdit snapshot;
  VersionRef version;
  uint64_t manifest_number;
  {
    std::lock_guard<std::mutex> l(mu_);
    versions_->SetLastSequence(last_sequence_.load());
    versions_->EncodeSnapshot(&snapshot);
    version = versions_->current();
    manifest_number = versions_->manifest_number();
  }
  // The copy needs no WAL: its log number points past every log.
  snapshot.SetLogNumber(snapshot.next_file_number_.value(), /*names_wal=*/false);

  s = env_->CreateDirIfMissing(dir);
  if (!s.ok()) return s;
  auto cleanup = [&](Status err) {
    std::vector<std::string> children;
    if (env_->GetChildren(dir, &children).ok()) {
      for (const auto& c : children) env_->RemoveFile(dir + "/" + c);
    }
    env_->RemoveDir(dir);
    return err;
  };
  for (const auto& [id, files] : version->cfs) {
    for (int level = 0; level < kNumLevels; level++) {
      for (const FileRef& f : files->levels[level]) {
        for (uint64_t number : {f->number, f->patch_file}) {
          if (number == 0) continue;
          std::string src = TableFileName(dbname_, number), dst = TableFileName(dir, number);
          s = env_->LinkFile(src, dst);
          if (s.IsNotSupported()) {
            std::string data;
            s = ReadFileToString(env_, src, &data);
            if (s.ok()) s = WriteStringToFile(env_, data, dst, /*sync=*/true);
          }
          if (!s.ok()) return cleanup(s);
          KillPoint("checkpoint.linked");
        }
      }
    }
  }
  std::unique_ptr<WritableFile> file;
  s = env_->NewWritableFile(ManifestFileName(dir, manifest_number), &file);
  if (!s.ok()) return cleanup(s);
  log::Writer writer(std::move(file), /*checksums=*/true);
  std::string record;
  snapshot.EncodeTo(&record);
  s = writer.AddRecord(record);
  if (s.ok()) s = writer.Sync();
  if (s.ok()) s = writer.Close();
  if (s.ok()) {
    std::string current = ManifestFileName("", manifest_number).substr(1) + "\n";
    s = WriteStringToFile(env_, current, CurrentFileName(dir), /*sync=*/true);
  }
  if (s.ok()) s = env_->SyncDir(dir);
  if (!s.ok()) return cleanup(s);
  return Status::OK();
}

Status DBImpl::GetLiveFiles(bool flush, std::vector<LiveFile>* files) {
  files->clear();
  if (flush) {
    Status s = Flush();
    if (!s.ok()) return s;
  }
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [id, cf] : versions_->current()->cfs) {
    for (int level = 0; level < kNumLevels; level++) {
      for (const FileRef& f : cf->levels[level]) {
        files->push_back(LiveFile{TableFileName("", f->number).substr(1), f->file_size, true});
        if (f->patch_file != 0) {
          files->push_back(LiveFile{TableFileName("", f->patch_file).substr(1), f->patch_size, true});
        }
      }
    }
  }
  std::string manifest = ManifestFileName("", versions_->manifest_number()).substr(1);
  uint64_t size = 0;
  env_->GetFileSize(dbname_ + "/" + manifest, &size);
  files->push_back(LiveFile{manifest, size, false});
  env_->GetFileSize(CurrentFileName(dbname_), &size);
  files->push_back(LiveFile{"CURRENT", size, false});
  return Status::OK();
}

DbStatistics DBImpl::GetStatistics() {
  DbStatistics st;
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
  st.bytes_written_wal = stat_wal_bytes_.load();
  st.bytes_written_flush = stat_flush_bytes_.load();
  st.bytes_written_compaction = stat_compaction_bytes_.load();
  st.bytes_read_compaction = stat_compaction_read_bytes_.load();
  st.bytes_read_table = read_counters_.bytes_read.load();
  st.flushes = stat_flushes_.load();
  for (int i = 0; i < static_cast<int>(CompactionReason::kCount); i++) {
    st.compactions[i] = stat_compactions_[i].load();
    st.bytes_written_compaction_by_reason[i] = stat_compaction_bytes_by_reason_[i].load();
  }
  if (page_cache_) {
    st.page_cache_hits = page_cache_->hits();
    st.page_cache_misses = page_cache_->misses();
  }
  st.bloom_useful = read_counters_.bloom_useful.load();
  st.write_stalls = stat_write_stalls_.load();
  st.user_bytes_written = stat_user_bytes_.load();
  st.blind_deletes_skipped = stat_blind_deletes_skipped_.load();
  st.secondary_deletes = stat_secondary_records_.load();
  st.pages_dropped = stat_pages_dropped_.load();
  st.page_bytes_dropped = stat_page_bytes_dropped_.load();
  st.files_dropped = stat_files_dropped_.load();
  st.bytes_punched = stat_bytes_punched_.load();
  st.partially_covered_pages = stat_partially_covered_pages_.load();
  st.secondary_bytes_compacted = stat_secondary_bytes_compacted_.load();
  st.pages_rewritten = stat_pages_rewritten_.load();
  st.rewrite_bytes_read = stat_rewrite_bytes_read_.load();
  st.rewrite_bytes_written = stat_rewrite_bytes_written_.load();
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
                  st.user_bytes_written, st.flushes, st.compactions[0], st.compactions[1],
                  st.compactions[2], st.compactions[3], st.compactions[4], st.write_stalls);
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
