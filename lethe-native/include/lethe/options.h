// Options: everything tunable about a database, a column family, a read and a
// write. Plain values, copied at open; nothing here changes after Open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lethe/memory_budget.h"

namespace lethe {

class Env;
class Clock;
class Snapshot;

// The delete key an entry carries when it never expires by delete key.
constexpr uint64_t kMaxDeleteKey = UINT64_MAX;

// How a saturation compaction (a level over capacity) chooses its file when
// FADE is on. Delete-driven compactions (a file whose
// tombstones outlived their level budget) always take the most overdue file.
enum class FadeFilePick : int {
  kMinOverlap = 0,    // SO: the file overlapping the fewest bytes of the next level
  kMostDeletes = 1,   // SD: the file with the most invalidated entries (b)
  kOldestDelete = 2,  // DD: the file with the oldest tombstone
};

constexpr int kPagesPerTileAuto = 0;

// How a column family's files are compacted. Stored in the manifest: never
// renumber. A column family keeps the style it was created with.
enum class CompactionStyle : int {
  // Levels of disjoint files, each level T times the one above (the
  // default; level targets below).
  kLeveled = 0,
  // For data that leaves by its delete key (window contents): every file
  // stays in level 0, a sorted run of its own, and leaves when the horizon
  // has dropped its pages, not by merging into older data. Only files
  // smaller than level1_bytes are merged, level0_compaction_trigger
  // neighbours at a time; at time_ordered_max_files files the two
  // neighbours smallest together merge. compaction/time_ordered.h.
  kTimeOrdered = 1,
};

// How data pages are compressed on disk. The numbers are stored in table
// files: never renumber. Every page is compressed on its own and stays
// independently readable; a page that would not shrink by at least an
// eighth is stored uncompressed.
enum class Compression : uint8_t {
  kNone = 0,
  kLZ4 = 1,   // fast; the default
  kZSTD = 2,  // smaller and slower to write (level 1)
};

// Per column family: the shape of its LSM tree and of its files.
struct ColumnFamilyOptions {
  // Size ratio T between adjacent levels.
  int size_ratio = 10;
  // Target size of a data page in bytes (before its Bloom filter).
  size_t page_size = 4096;
  // Pages per delete tile, h. 1 is the classic layout;
  // kPagesPerTileAuto chooses h for every new file from the lookups and
  // secondary deletes observed (compaction/tile_size.h).
  int pages_per_tile = 1;
  // Bloom filter bits per key, per page; 0 disables the filters.
  int bloom_bits_per_key = 10;
  // Bytes of index and Bloom filters per index partition: the unit a table
  // reader loads on demand through the page cache on a shared memory budget
  // (without one, tables keep their whole index in memory). 0 writes each
  // table's index as one partition, which its reader always keeps.
  size_t index_partition_size = 4096;
  // Compression of data pages (filters and index blocks stay uncompressed).
  Compression compression = Compression::kLZ4;
  // Compression of files written to the last non-empty level, where most of
  // the data lives (ZSTD there trades write CPU for space), and of every file
  // of a time-ordered family (written once, where it stays); unset means
  // `compression`.
  std::optional<Compression> bottommost_compression;
  // Compression of the level-0 files flushes write; unset means
  // `compression`. A flushed file is young: compaction soon reads it and
  // writes its entries again, compressed as their level wants. Its
  // compression is CPU spent on the flush a checkpoint waits for (LZ4
  // compresses about 0.4 GB/s a core), for bytes that live a short time.
  // A time-ordered family's flushes write files that stay, and take
  // `bottommost_compression`; only a flush a caller waits for takes this.
  std::optional<Compression> flush_compression;
  // Target size of a file written by compaction.
  size_t target_file_size = 8 << 20;
  CompactionStyle compaction_style = CompactionStyle::kLeveled;
  // With kTimeOrdered: the most files before neighbours merge whatever
  // their size (data that never leaves by delete key must not pile up).
  int time_ordered_max_files = 128;
  // Level targets (compaction/level_targets.h). Static (the default, as
  // Flink's RocksDB backend runs RocksDB): level 1 holds level1_bytes and
  // level i size_ratio^(i-1) times as much. Dynamic (RocksDB's
  // level_compaction_dynamic_level_bytes): each level targets a
  // size_ratio-th of the one below, counted from the largest level, so the
  // last level holds most of the data and files take little more than the
  // live data, for more compaction writes into the last level; level 0 goes
  // to the first level whose target is at most level1_bytes.
  bool dynamic_level_bytes = false;
  uint64_t level1_bytes = 32 << 20;
  // Number of level-0 files that triggers a level-0 compaction.
  int level0_compaction_trigger = 4;
  // Writes stall while level 0 has this many files.
  int level0_stop_writes_trigger = 20;

  // FADE: the delete persistence threshold D_th in microseconds.
  // Every tombstone is physically gone from every file (with the entries it
  // deletes) within D_th of its write, also when writes stop; live snapshots
  // may hold tombstones back. 0 turns FADE off: classic leveled compaction
  // with round-robin file choice.
  uint64_t delete_persistence_threshold_us = 0;
  // File choice of saturation compactions while FADE is on.
  FadeFilePick fade_file_pick = FadeFilePick::kMostDeletes;
};

struct Options {
  // Creates the directory and an empty database if none exists.
  bool create_if_missing = true;
  bool error_if_exists = false;

  // Memory for all memtables together before they are flushed (bytes).
  size_t write_buffer_size = 64 << 20;
  // Capacity of the database's page cache (bytes of decoded pages); 0
  // disables it. Not used with a memory budget.
  size_t page_cache_bytes = 32 << 20;
  // Open table readers kept in the table cache (at least 16), or -1 to keep
  // every table open: reads then reach a table's reader without the cache's
  // lock, and each table's index and filters stay in memory while it lives.
  // Not used with a memory budget, which bounds open tables by bytes.
  int max_open_files = -1;
  // One budget shared with other databases (lethe/memory_budget.h): page
  // cache, write buffers and open tables all count against it.
  // write_buffer_size still caps this database's memtables.
  std::shared_ptr<MemoryBudget> memory_budget;
  // Threads that help a MultiGet through a batch of more than 4 distinct
  // keys, beside the caller (0: the caller alone). Shared by the callers.
  int multi_get_threads = 1;
  // After flushes and compactions, and when a database closes, give the
  // memory the allocator holds free back to the operating system (glibc's
  // malloc_trim), at most once per this many microseconds across the
  // process; on a shared memory budget also when its page cache gave way to
  // growing memtables by a sixteenth of its capacity, then at most once per
  // second (or this interval, if shorter). Without it the buffers
  // compactions free, the pages the cache gives up, and a closed database's
  // memory stay resident: measured, a database holding 258 MiB had a
  // resident set of 663 MiB after one close and reopen. 0: never.
  uint64_t heap_trim_interval_us = 10'000'000;

  // Write-ahead log. Flink keeps its own durability through checkpoints and
  // runs with use_wal = false; then unflushed writes are lost on a crash.
  bool use_wal = true;
  // Whether WAL records carry and are checked against a CRC32C.
  bool wal_checksums = true;
  // Without a WAL: when a memtable fills, first compact it in memory with
  // the resident survivors of earlier ones (dropping overwritten versions,
  // deleted keys, entries under the horizon) and keep what survives in
  // memory when it fits a quarter of the write buffers and holds no
  // tombstone; a larger remainder, one with tombstones, Flush and
  // checkpoints write files. Saves
  // the writes of workloads that delete most of what they wrote shortly
  // before (fired windows, cleared state). Ignored with a WAL.
  bool compact_in_memory = true;

  // Verify every page's checksum on read (cheap: CRC32C in hardware).
  bool verify_checksums = true;

  // Run flushes and compactions on a background thread. When false they run
  // only when asked (Flush, CompactAll), which tests use for determinism.
  bool background_compactions = true;

  // Blind deletes: before writing a point tombstone, probe the
  // memtables and the files' Bloom filters; when no version of the key can
  // exist, write nothing (the sequence number is still used). Costs a filter
  // probe per delete; saves a tombstone that FADE would have to move down.
  bool avoid_blind_deletes = false;

  // The defaults for column families created without options of their own,
  // and the options of the default column family.
  ColumnFamilyOptions cf_defaults;

  // Files and time; nullptr means Env::Default() and Clock::Default().
  Env* env = nullptr;
  Clock* clock = nullptr;
};

struct WriteOptions {
  // fsync the WAL before acknowledging the write.
  bool sync = false;
  // Skip the WAL for this write (the write is lost on a crash before flush).
  bool disable_wal = false;
};

struct ReadOptions {
  // Read as of this snapshot; nullptr reads the latest state.
  const Snapshot* snapshot = nullptr;
  // Iterators only: keys < lower_bound and keys >= upper_bound are invisible.
  // Empty means unbounded. The strings are copied by NewIterator.
  std::string lower_bound;
  std::string upper_bound;
  bool has_lower_bound = false;
  bool has_upper_bound = false;
  // Whether pages read by this operation enter the page cache.
  bool fill_cache = true;
  // Point lookups (Get) only: the delete key that every value and merge
  // operand of the key was written with, when the caller knows it (a window
  // store's entry carries its window's start). A file without tombstones
  // whose entries' delete keys all lie elsewhere is then passed over unread.
  // An entry of the key written with another delete key may go unseen.
  bool has_delete_key = false;
  uint64_t delete_key = 0;
};

}  // namespace lethe
