// TableBuilder writes one KiWi table file (layout in table_format.h).
//
// Entries arrive in internal-key order. The builder buffers one delete tile
// (about pages_per_tile * page_size bytes, never splitting a sort key's
// versions), then orders the tile's entries by delete key, cuts them into
// pages of about equal size and writes each page sorted by internal key.
//
// Call order: (Add | AddRangeTombstone)* (Finish | Abandon).
// Thread-safety: one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lethe/env.h"
#include "lethe/options.h"
#include "format/range_tombstone.h"
#include "sst/bloom.h"
#include "sst/page.h"
#include "sst/table_format.h"

namespace lethe {

struct TableBuilderOptions {
  size_t page_size = 4096;
  int pages_per_tile = 1;
  int bloom_bits_per_key = 10;
  Compression compression = Compression::kNone;
  // Bytes of index and filters per index partition (the unit a reader loads
  // on demand); a partition ends after the tile that reaches it. 0 writes
  // one partition (patch tables: their readers keep it in memory).
  size_t index_partition_size = 4096;
};

class TableBuilder {
 public:
  TableBuilder(const TableBuilderOptions& options, WritableFile* file);

  // REQUIRES: ikey is larger than every key added before.
  void Add(std::string_view ikey, std::string_view value, uint64_t delete_key);
  // Tombstones may arrive in any order; they are stored sorted by start.
  void AddRangeTombstone(const RangeTombstone& t);

  // Ends the current delete tile here. Patch tables (one tile per replaced
  // page, addressed by position) use it; their tiles may overlap in sort
  // key when several pages of one delete tile were replaced.
  void CutTile() { FlushTile(); }

  Status Finish();
  void Abandon() { closed_ = true; }

  // Bytes written so far plus the buffered tile: used to cut compaction output.
  uint64_t EstimatedSize() const { return offset_ + tile_bytes_; }
  uint64_t FileSize() const { return offset_; }
  const TableProperties& properties() const { return props_; }
  const Status& status() const { return status_; }

 private:
  // A buffered entry: its key and value live in tile_data_.
  struct Entry {
    size_t offset;
    uint32_t key_size;
    uint32_t value_size;
    uint64_t delete_key;
  };
  std::string_view EntryKey(const Entry& e) const { return {tile_data_.data() + e.offset, e.key_size}; }
  std::string_view EntryValue(const Entry& e) const {
    return {tile_data_.data() + e.offset + e.key_size, e.value_size};
  }
  void FlushTile();
  void WritePage(const std::vector<const Entry*>& entries, TileMeta* tile);
  void WriteBlock(std::string_view contents, BlockHandle* handle);
  // Writes the index partitions; returns the top-level index.
  std::string WritePartitions(BlockHandle* region);

  TableBuilderOptions options_;
  WritableFile* file_;
  Status status_;
  uint64_t offset_ = 0;
  bool closed_ = false;

  std::vector<Entry> tile_;  // the buffered tile, in internal-key order
  std::string tile_data_;
  size_t tile_bytes_ = 0;
  std::string last_sort_key_;

  PageBuilder page_;
  std::string compressed_;  // the current page compressed (reused)
  BloomBuilder bloom_;
  std::string filters_;
  std::vector<TileMeta> tiles_;
  std::vector<RangeTombstone> tombstones_;
  TableProperties props_;
};

}  // namespace lethe
