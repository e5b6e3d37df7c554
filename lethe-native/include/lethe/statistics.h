// Statistics: a snapshot of what the engine holds and has done, as plain
// values (the Java API mirrors these structs field by field).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lethe {

// Buckets of the tombstone age histogram, as shares of D_th: [0, 25 %),
// [25 %, 50 %), [50 %, 75 %), [75 %, 100 %), 100 % and older.
constexpr int kTombstoneAgeBuckets = 5;

struct LevelStatistics {
  int level = 0;
  uint64_t files = 0;
  uint64_t bytes = 0;
  uint64_t entries = 0;
  uint64_t point_tombstones = 0;
  uint64_t range_tombstones = 0;
  // Age of the oldest tombstone in the level (0: none).
  uint64_t oldest_tombstone_age_us = 0;
  // Sum of the files' estimated invalidated entries (b).
  uint64_t estimated_invalidated = 0;
  // Tombstones by age as shares of D_th (all zero while FADE is off). A
  // file's tombstones count at the age of its oldest one: an upper bound.
  uint64_t tombstone_age_histogram[kTombstoneAgeBuckets] = {};
};

struct ColumnFamilyStatistics {
  uint32_t id = 0;
  std::string name;
  uint64_t memtable_bytes = 0;
  uint64_t memtable_entries = 0;
  std::vector<LevelStatistics> levels;  // level 0 first, up to the deepest used
  // FADE: the threshold (0: off) and the oldest tombstone's age, memtables
  // included, to compare with it.
  uint64_t delete_persistence_threshold_us = 0;
  uint64_t oldest_tombstone_age_us = 0;
  // Estimated space amplification: entries in files per entry still valid,
  // taking each point tombstone and each estimated invalidated entry as one
  // dead entry (1.0: nothing obsolete on disk).
  double space_amplification_estimate = 1.0;
  // Secondary deletes: the expiry horizon (0: none) and the records kept.
  uint64_t horizon = 0;
  uint64_t secondary_delete_records = 0;
  // Pages per delete tile for the family's next file (chosen when the option
  // is kPagesPerTileAuto).
  uint64_t pages_per_tile = 1;
};

// Why a compaction ran.
enum class CompactionReason : int {
  kLevel0 = 0,       // too many level-0 files
  kSaturation = 1,   // a level above its capacity
  kManual = 2,       // CompactAll
  kTrivialMove = 3,  // moved to the next level without rewriting
  kDeleteDriven = 4, // FADE: tombstones outlived their level budget
  kCount = 5,
};

struct DbStatistics {
  std::vector<ColumnFamilyStatistics> column_families;
  uint64_t bytes_written_wal = 0;
  uint64_t bytes_written_flush = 0;
  uint64_t bytes_written_compaction = 0;
  uint64_t bytes_read_compaction = 0;
  uint64_t bytes_read_table = 0;  // bytes of pages read from files by user reads
  uint64_t flushes = 0;
  uint64_t compactions[static_cast<int>(CompactionReason::kCount)] = {};
  uint64_t bytes_written_compaction_by_reason[static_cast<int>(CompactionReason::kCount)] = {};
  uint64_t page_cache_hits = 0;
  uint64_t page_cache_misses = 0;
  uint64_t bloom_useful = 0;  // page reads avoided by a Bloom filter
  uint64_t write_stalls = 0;
  uint64_t user_bytes_written = 0;  // bytes of keys and values handed to writes
  uint64_t blind_deletes_skipped = 0;  // point deletes not written (avoid_blind_deletes)
  uint64_t live_bytes = 0;          // bytes of all live table files
  // Secondary deletes (DeleteByDeleteKey, AdvanceHorizon).
  uint64_t secondary_deletes = 0;              // calls that added a record
  uint64_t pages_dropped = 0;                  // full page drops (manifest edits, no I/O)
  uint64_t page_bytes_dropped = 0;             // their bytes: reclaimed without reading or rewriting
  uint64_t files_dropped = 0;                  // files all of whose pages were dropped
  uint64_t bytes_punched = 0;                  // local bytes released by hole punching
  uint64_t partially_covered_pages = 0;        // at the last check: pages left for compaction
  uint64_t secondary_bytes_compacted = 0;      // key and value bytes removed by flush and compaction
  uint64_t pages_rewritten = 0;                // partly covered pages rewritten into patch tables
  uint64_t rewrite_bytes_read = 0;             // page bytes those rewrites read
  uint64_t rewrite_bytes_written = 0;          // patch table bytes they wrote
};

}  // namespace lethe
