// TableWriter: turns a CompactionStream into table files, cutting a new file
// every target_file_size bytes at a sort-key boundary. Range tombstones are
// clipped to each file's share of the key space: a cut after sort key a
// gives the next file everything from a's successor (a + '\0') on, so files
// of one level stay disjoint while tombstones keep covering the gaps.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compaction/compaction_stream.h"
#include "lethe/env.h"
#include "lethe/options.h"
#include "version/file_metadata.h"

namespace lethe {

struct TableWriterOptions {
  std::string dbname;
  Env* env = nullptr;
  ColumnFamilyOptions cf_options;
  uint64_t max_file_bytes = UINT64_MAX;  // flushes write one file
  bool sync = true;  // each output synced before it counts as written
  // The outputs go to the last non-empty level: cf_options'
  // bottommost_compression applies, when set.
  bool bottommost = false;
  // The outputs are a flush's: cf_options' flush_compression applies, when
  // set (unless bottommost's does).
  bool flush = false;
  uint64_t now_us = 0;
  uint64_t oldest_tombstone_time_us = 0;  // inherited by outputs holding tombstones
  // When set, replaces oldest_tombstone_time_us: the oldest tombstone time of
  // the inputs that may have contributed to an output covering [lo, hi].
  std::function<uint64_t(std::string_view lo, std::string_view hi)> oldest_tombstone_time;
  // Entries a range tombstone [lo, hi) may invalidate in deeper files, for a
  // file's estimated_invalidated (b); unset counts none.
  std::function<uint64_t(std::string_view lo, std::string_view hi)> estimate_covered;
  // Secondary-delete records up to this sequence were fully applied to the
  // outputs (FileMetaData::secondary_applied_seq).
  uint64_t secondary_applied_seq = 0;
  // Returns a fresh file number (registered as a pending output).
  std::function<uint64_t()> new_file_number;
  // Polled between keys; true aborts the job (shutdown).
  std::function<bool()> should_stop;
};

struct TableWriterResult {
  std::vector<FileMetaData> files;
  uint64_t bytes_written = 0;
};

// The codec of a file written for cf: to the last non-empty level
// (`bottommost`), by a flush (`flush`), or else.
Compression OutputCompression(const ColumnFamilyOptions& cf, bool bottommost, bool flush);

Status WriteTables(const TableWriterOptions& options, CompactionStream* stream,
                   TableWriterResult* result);

}  // namespace lethe
