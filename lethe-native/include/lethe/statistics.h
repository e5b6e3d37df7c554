// Statistics: a snapshot of what the engine holds and has done, as plain
// values: counters ("tickers", one list below) and per column family and
// level what the files hold.
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
  kPageRewrite = 5,  // secondary deletes would rewrite every page a file holds: the file alone, in place
  kCount = 6,
};

// The engine's counters ("tickers"), defined once: the DbStatistics fields,
// the engine's counters, the JNI transfer and the Java enum
// io.lethe.engine.Ticker (generated from this list at build time) all
// follow it. Each entry: enum name, field name, what it counts. The
// position is the transfer order: append new tickers at the end (the
// transfer is versioned, see kStatisticsTransferVersion).
#define LETHE_TICKERS(X)                                                                              \
  X(kBytesWrittenWal, bytes_written_wal, "Bytes appended to the write-ahead log.")                  \
  X(kBytesWrittenFlush, bytes_written_flush, "Bytes of table files written by flushes.")            \
  X(kBytesWrittenCompaction, bytes_written_compaction, "Bytes of table files written by compactions.") \
  X(kBytesWrittenCheckpointImage, bytes_written_checkpoint_image,                                    \
    "Bytes of table files checkpoints wrote from memtables into their copies (the memtables stay).") \
  X(kBytesReadCompaction, bytes_read_compaction, "Bytes of table files read by compactions.")       \
  X(kBytesReadTable, bytes_read_table, "Bytes of pages read from table files by user reads.")       \
  X(kFlushes, flushes, "Memtable flushes.")                                                         \
  X(kCompactionsLevel0, compactions_level0, "Compactions because level 0 held too many files.")     \
  X(kCompactionsSaturation, compactions_saturation, "Compactions because a level outgrew its capacity.") \
  X(kCompactionsManual, compactions_manual, "Compactions asked for by CompactAll.")                 \
  X(kTrivialMoves, trivial_moves, "Files moved to the next level without rewriting.")               \
  X(kCompactionsDeleteDriven, compactions_delete_driven,                                            \
    "FADE compactions: tombstones outlived their level budget.")                                    \
  X(kCompactionBytesLevel0, compaction_bytes_level0, "Bytes written by level-0 compactions.")       \
  X(kCompactionBytesSaturation, compaction_bytes_saturation, "Bytes written by saturation compactions.") \
  X(kCompactionBytesManual, compaction_bytes_manual, "Bytes written by manual compactions.")         \
  X(kCompactionBytesTrivialMove, compaction_bytes_trivial_move, "Bytes written by trivial moves (none).") \
  X(kCompactionBytesDeleteDriven, compaction_bytes_delete_driven, "Bytes written by FADE compactions.") \
  X(kPageCacheHits, page_cache_hits, "Page reads served by the page cache.")                        \
  X(kPageCacheMisses, page_cache_misses, "Page reads the page cache missed.")                       \
  X(kBloomUseful, bloom_useful, "Page reads avoided by a page's Bloom filter.")                     \
  X(kRangeDeleteSkips, range_delete_skips,                                                          \
    "Stretches of entries iterators passed over with one seek: a newer range tombstone covers them.") \
  X(kWriteStalls, write_stalls, "Writes that waited for a flush.")                                  \
  X(kUserBytesWritten, user_bytes_written, "Bytes of keys and values handed to writes.")            \
  X(kBlindDeletesSkipped, blind_deletes_skipped,                                                    \
    "Point deletes not written because no version of the key could exist.")                        \
  X(kLiveBytes, live_bytes, "Bytes of all live table files.")                                       \
  X(kSecondaryDeletes, secondary_deletes, "Deletes by delete key and horizon moves that added a record.") \
  X(kPagesDropped, pages_dropped, "Pages dropped whole by manifest edits, without reading them.")   \
  X(kPageBytesDropped, page_bytes_dropped, "Bytes of the pages dropped whole.")                     \
  X(kFilesDropped, files_dropped, "Files all of whose pages were dropped.")                         \
  X(kBytesPunched, bytes_punched, "Local storage released by punching holes for dropped pages (whole file-system blocks; measured).")      \
  X(kPartiallyCoveredPages, partially_covered_pages,                                                \
    "Pages only partly covered by secondary deletes at the last check.")                            \
  X(kSecondaryBytesCompacted, secondary_bytes_compacted,                                            \
    "Key and value bytes flushes and compactions removed under secondary deletes.")                 \
  X(kPagesRewritten, pages_rewritten, "Partly covered pages rewritten into patch tables.")          \
  X(kRewriteBytesRead, rewrite_bytes_read, "Page bytes those rewrites read.")                       \
  X(kRewriteBytesWritten, rewrite_bytes_written, "Patch table bytes those rewrites wrote.")              \
  X(kMemoryBudgetBytes, memory_budget_bytes,                                                        \
    "Capacity of the memory budget (shared with the other databases on it), or of the own page cache.") \
  X(kMemoryPageCacheBytes, memory_page_cache_bytes, "Decoded pages the budget's page cache holds.")   \
  X(kMemoryWriteBufferBytes, memory_write_buffer_bytes, "Memtable bytes charged to the budget.")      \
  X(kMemoryTableReaderBytes, memory_table_reader_bytes,                                             \
    "Open tables' index, filters and tombstones counted by the budget.")                            \
  X(kMemoryPinnedTableReaderBytes, memory_pinned_table_reader_bytes,                                \
    "The part of those tables kept open for good.")                                                 \
  X(kTableOpens, table_opens,                                                                       \
    "Table files opened, their top-level index read (tables of older formats: their whole index and filters): once per file while tables stay open, again whenever a table left the table cache.") \
  X(kIndexPartitionReads, index_partition_reads,                                                    \
    "Index partitions (a run of tiles' index and Bloom filters) read from table files, when a lookup found them in no cache or a table keeping its whole index opened.") \
  X(kInMemoryCompactions, in_memory_compactions,                                                    \
    "Memtables compacted in memory on a flush: what survived stayed in memory instead of going to a file.") \
  X(kFilesReplacedByPatch, files_replaced_by_patch,                                                 \
    "Files none of whose own pages remained (each dropped or patched), replaced by their patch table.") \
  X(kCompactionsPageRewrite, compactions_page_rewrite,                                              \
    "Files compacted alone, in place, because secondary deletes would have rewritten every page they held.") \
  X(kCompactionBytesPageRewrite, compaction_bytes_page_rewrite, "Bytes written by those compactions.") \
  X(kHeapTrims, heap_trims,                                                                        \
    "Heap trims this database ran (the allocator's free memory given back to the operating system): after flushes and compactions, and when the page cache gave way to growing memtables.") \
  X(kHeldVersions, held_versions,                                                                   \
    "Versions of the file set held besides the current one, by iterators, checkpoints and background work (not a counter).") \
  X(kOldestHeldVersionAgeUs, oldest_held_version_age_us,                                            \
    "How long ago the oldest held version stopped being current, in microseconds (0: none held; not a counter).") \
  X(kObsoleteFileBytesHeld, obsolete_file_bytes_held,                                               \
    "Bytes of table files no longer current that held versions keep on disk (not a counter).")      \
  X(kOpenIterators, open_iterators, "Iterators open now (not a counter).")                          \
  X(kOpenCheckpoints, open_checkpoints, "Checkpoint copies begun and not yet released (not a counter).") \
  X(kRunningCompactionAgeUs, running_compaction_age_us,                                             \
    "How long the compaction running now has run, in microseconds (0: none; not a counter). Page drops wait for it.") \
  X(kRunningCompactionInputBytes, running_compaction_input_bytes,                                   \
    "The input bytes of the compaction running now (0: none; not a counter).")                      \
  X(kCheckpointFlushes, checkpoint_flushes,                                                         \
    "Checkpoints whose copy linked a flush of the memtables instead of copying them (the copy would have been flushed right after).") \
  X(kFlushMicros, flush_micros,                                                                     \
    "Microseconds flushes ran, from taking the memtables to installing their files (wall time).")   \
  X(kCheckpointFlushWaitMicros, checkpoint_flush_wait_micros,                                       \
    "Microseconds from the switch of the memtables a checkpoint copy links until their flush was done, per copy (wall time).") \
  X(kFlushDelayMicros, flush_delay_micros,                                                          \
    "Microseconds switched memtables waited for the flush thread to start their flush (wall time).") \
  X(kHeapTrimMicros, heap_trim_micros, "Microseconds this database's heap trims took (wall time).") \
  X(kCompactionGiveWayMicros, compaction_give_way_micros,                                           \
    "Microseconds compactions paused between keys for a flush a checkpoint copy or a Flush call waited for (wall time).")

enum class Ticker : int {
#define LETHE_TICKER_ENUM(id, field, doc) id,
  LETHE_TICKERS(LETHE_TICKER_ENUM)
#undef LETHE_TICKER_ENUM
  kCount
};
constexpr int kTickerCount = static_cast<int>(Ticker::kCount);

// The ticker counting compactions of `reason`, and the one counting their bytes.
Ticker CompactionTicker(CompactionReason reason);
Ticker CompactionBytesTicker(CompactionReason reason);

struct DbStatistics {
#define LETHE_TICKER_FIELD(id, field, doc) uint64_t field = 0;
  LETHE_TICKERS(LETHE_TICKER_FIELD)
#undef LETHE_TICKER_FIELD
  std::vector<ColumnFamilyStatistics> column_families;

  uint64_t Get(Ticker t) const;
  void Set(Ticker t, uint64_t value);
};

}  // namespace lethe
