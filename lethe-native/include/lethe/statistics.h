// Statistics: a snapshot of what the engine holds and has done, as plain
// values (the Java API mirrors these structs field by field).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lethe {

struct LevelStatistics {
  int level = 0;
  uint64_t files = 0;
  uint64_t bytes = 0;
  uint64_t entries = 0;
  uint64_t point_tombstones = 0;
  uint64_t range_tombstones = 0;
};

struct ColumnFamilyStatistics {
  uint32_t id = 0;
  std::string name;
  uint64_t memtable_bytes = 0;
  uint64_t memtable_entries = 0;
  std::vector<LevelStatistics> levels;  // level 0 first, up to the deepest used
};

// Why a compaction ran.
enum class CompactionReason : int {
  kLevel0 = 0,       // too many level-0 files
  kSaturation = 1,   // a level above its capacity
  kManual = 2,       // CompactAll
  kTrivialMove = 3,  // moved to the next level without rewriting
  kCount = 4,
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
  uint64_t page_cache_hits = 0;
  uint64_t page_cache_misses = 0;
  uint64_t bloom_useful = 0;  // page reads avoided by a Bloom filter
  uint64_t write_stalls = 0;
  uint64_t user_bytes_written = 0;  // bytes of keys and values handed to writes
  uint64_t live_bytes = 0;          // bytes of all live table files
};

}  // namespace lethe
