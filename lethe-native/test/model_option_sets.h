// The option sets the randomized model test runs: each one a shape of the
// engine (memtable and page sizes, tiles, WAL, crashes, FADE, compression,
// table cache, memory budget, in-memory compaction, compaction style) that
// the random operations are checked under.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "lethe/options.h"

namespace lethe::model {

struct OptionSet {
  const char* name;
  size_t write_buffer;
  size_t page_size;
  int pages_per_tile;
  bool use_wal;
  bool background;
  bool crashes;  // all writes sync; crash + recover steps
  uint64_t level1_bytes;
  size_t target_file_size;
  int size_ratio;
  uint64_t delete_persistence_threshold_us = 0;  // FADE off unless set
  FadeFilePick fade_file_pick = FadeFilePick::kMostDeletes;
  Compression compression = Compression::kLZ4;  // the values repeat a character: pages compress
  std::optional<Compression> bottommost_compression = std::nullopt;
  int max_open_files = -1;  // every table open unless set
  size_t memory_budget = 0;  // bytes of a memory budget shared with an idle neighbour; 0: none
  // Dynamic level targets unless a set says otherwise: the static default is
  // what the other engine tests run.
  bool dynamic_level_bytes = true;
  size_t index_partition_size = 4096;  // bytes of index and filters per partition
  // The run must have kept some flushes' survivors in memory: no WAL; hot
  // and wide key sets of 16 and 32 keys instead of 200 and 3000, so that a
  // quarter of the write buffers can hold a memtable's survivors; steps that
  // flush (Flush, CompactAll, reopens, checkpoints) a hundredth as often, so
  // that memtables fill; every other 6000 steps no deletes but horizon moves
  // (DeleteFree), so that some memtables end without a tombstone that must
  // reach the files; three times the operations.
  bool compacts_in_memory = false;
  CompactionStyle compaction_style = CompactionStyle::kLeveled;
  int time_ordered_max_files = 128;
  std::optional<Compression> flush_compression = std::nullopt;  // as compression unless set
};

const OptionSet kOptionSets[] = {
    {"tiny-memtable-h1", 16 << 10, 256, 1, true, true, false, 64 << 10, 16 << 10, 4},
    {"tiny-memtable-h16", 16 << 10, 256, 16, true, true, false, 64 << 10, 16 << 10, 4},
    {"no-wal-h4-manual-zstd", 32 << 10, 512, 4, false, false, false, 128 << 10, 32 << 10, 10, 0,
     FadeFilePick::kMostDeletes, Compression::kZSTD},
    {"crash-sync-h8-bottom-zstd", 24 << 10, 256, 8, true, true, true, 64 << 10, 16 << 10, 4, 0,
     FadeFilePick::kMostDeletes, Compression::kNone, Compression::kZSTD},
    // Many files and a table cache of 16: readers open and evict tables,
    // each reading its index in partitions of a few tiles.
    {"deep-levels-h2-uncompressed-16-open", 8 << 10, 128, 2, true, true, false, 16 << 10, 4 << 10, 3, 0,
     FadeFilePick::kMostDeletes, Compression::kNone, std::nullopt, 16, 0, true, 200},
    // FADE on, with a threshold of a few hundred steps (the clock moves 1 ms a step).
    // A large memtable: FADE's timer, not a full memtable, flushes tombstones.
    {"fade-sd-h4", 1 << 20, 256, 4, true, true, false, 32 << 10, 8 << 10, 4, 300'000,
     FadeFilePick::kMostDeletes},
    {"fade-so-deep-h1", 8 << 10, 128, 1, false, true, false, 16 << 10, 4 << 10, 3, 100'000,
     FadeFilePick::kMinOverlap},
    // A memory budget of 64 KiB shared with another database: the budget
    // flushes (its write buffers are 48 KiB, the memtable's own limit is far
    // above), tables are bound (past 8 KiB pinned they open and leave a
    // table cache of 12 KiB), pages and index partitions of a few tiles share
    // one cache.
    {"shared-budget-h2", 4 << 20, 256, 2, true, true, false, 64 << 10, 16 << 10, 4, 0,
     FadeFilePick::kMostDeletes, Compression::kLZ4, std::nullopt, -1, 64 << 10, true, 300},
    // Static level targets (level 1 holds level1_bytes), FADE on.
    {"static-levels-fade-dd-h1", 8 << 10, 128, 1, true, true, false, 16 << 10, 4 << 10, 3, 100'000,
     FadeFilePick::kOldestDelete, Compression::kLZ4, std::nullopt, -1, 0, false},
    // No WAL and write buffers of 256 KiB: flushes compact in memory and keep
    // survivors of up to 64 KiB resident, merged into the next flush; larger
    // remainders, Flush (reopens, checkpoints) and CompactAll write files.
    {"no-wal-in-memory-h4", 256 << 10, 256, 4, false, true, false, 128 << 10, 32 << 10, 4, 0,
     FadeFilePick::kMostDeletes, Compression::kLZ4, std::nullopt, -1, 0, true, 4096, true},
    // The same under FADE (its deadlines flush memtables, whose tombstones
    // are dropped or go to files) and a shared budget (residents bounded by a
    // quarter of its write buffers, the neighbour's included).
    {"no-wal-in-memory-fade-budget-h2", 4 << 20, 256, 2, false, true, false, 64 << 10, 16 << 10, 4, 300'000,
     FadeFilePick::kMostDeletes, Compression::kLZ4, std::nullopt, -1, 160 << 10, true, 300, true},
    // Time-ordered: every file stays in level 0. Flushes of up to 16 KiB
    // are young (below 24 KiB) and merge in runs of three neighbours, in
    // front of older files; at 12 files the smallest neighbours merge.
    // Tombstones, merge operands and range tombstones meet older versions in
    // files a merge leaves out.
    {"time-ordered-h1", 16 << 10, 256, 1, true, true, false, 1 << 10, 16 << 10, 4, 0,
     FadeFilePick::kMostDeletes, Compression::kLZ4, std::nullopt, -1, 0, true, 4096, false,
     CompactionStyle::kTimeOrdered, 12},
    // The same under FADE: tombstones past D' merge their file with every
    // older one, secondary deletes alone rewrite the file; a table cache of 16.
    {"time-ordered-fade-h4", 8 << 10, 256, 4, false, true, false, 800, 8 << 10, 4, 100'000,
     FadeFilePick::kMostDeletes, Compression::kZSTD, std::nullopt, 16, 0, true, 300, false,
     CompactionStyle::kTimeOrdered, 24, Compression::kNone},
    // Flushes write level 0 uncompressed, the levels below take LZ4 and the
    // last ZSTD: level-0 files leave by rewrites only; crashes and recovery.
    {.name = "flush-uncompressed-crash-h2", .write_buffer = 16 << 10, .page_size = 256, .pages_per_tile = 2,
     .use_wal = true, .background = true, .crashes = true, .level1_bytes = 64 << 10, .target_file_size = 16 << 10,
     .size_ratio = 4, .bottommost_compression = Compression::kZSTD, .flush_compression = Compression::kNone},
};

}  // namespace lethe::model
