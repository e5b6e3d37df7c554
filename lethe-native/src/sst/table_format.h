// The KiWi table file (docs/formats.md, "Table file"):
//
//   data pages      page contents | masked crc32c fixed32, page after page;
//                   a delete tile's h pages are adjacent, in delete-key order
//   index partitions  (format 3 on) per run of consecutive tiles: index size
//                   varint32 | their index (as the index block below, filter
//                   offsets relative to this block's filters) | their pages'
//                   filters | crc
//   filter region   (formats 1, 2) one Bloom filter per page (bloom.h),
//                   concatenated | crc
//   range tombstone block   count varint | (start lp | end lp | seq varint64)* | crc
//   top-level index (format 3 on) partition count varint | per partition:
//                   smallest lp | largest lp | tiles varint32 | pages varint32 |
//                   offset varint64 | size varint64 | crc
//   index block     (formats 1, 2) tile count varint | per tile: smallest lp | largest lp |
//                   page count varint | per page: offset varint64 |
//                   size varint32 | entries varint32 | delete_key_min fixed64 |
//                   delete_key_max fixed64 | filter offset varint64 |
//                   filter size varint32 | compression byte | raw size
//                   varint32 | crc
//                   (format 1 has no compression and raw size: its pages are
//                   stored as they are)
//   properties      tagged fields (TableProperties::EncodeTo) | crc
//   footer          filter, range tombstone, index, properties handles
//                   (offset fixed64 | size fixed64 each, sizes without crc) |
//                   format version fixed32 | magic fixed64; from format 3 the
//                   first handle names the partition region (its size with
//                   every partition's crc) and the index handle the top-level
//                   index
//
// Tiles have disjoint sort-key ranges in file order and never split the
// versions of one sort key; pages inside a tile are ordered by delete key
// and each page's entries by internal key. A page's size is what it takes
// on disk; a compressed page (compression.h) decodes to raw size bytes, and
// its checksum covers the stored bytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lethe/status.h"

namespace lethe {

constexpr uint64_t kTableMagic = 0x4c45544845'4b4957ull;  // "LETHEKIW"
// Written by this build; every version from kOldestTableFormatVersion on is
// read. 2 added page compression, 3 the partitioned index, 4 the compact
// index (keys as suffixes of the key before them, offsets and delete keys as
// small varints; formats.md 6.5).
constexpr uint32_t kTableFormatVersion = 4;
constexpr uint32_t kFirstPartitionedFormatVersion = 3;
constexpr uint32_t kFirstCompactIndexFormatVersion = 4;
constexpr uint32_t kOldestTableFormatVersion = 1;
constexpr size_t kBlockTrailerSize = 4;  // masked crc32c after every block
constexpr size_t kFooterSize = 4 * 16 + 4 + 8;

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;  // without the trailer
};

// Whether [offset, offset + size + trailer) lies inside [0, limit), without
// wrapping (offsets and sizes read from a file may hold any value).
inline bool FitsIn(uint64_t offset, uint64_t size, uint64_t limit, uint64_t trailer) {
  return offset <= limit && size <= limit - offset && trailer <= limit - offset - size;
}

struct Footer {
  BlockHandle filter, range_tombstones, index, properties;
  uint32_t version = kTableFormatVersion;
  void EncodeTo(std::string* dst) const;
  Status DecodeFrom(std::string_view input);
};

struct PageMeta {
  uint64_t offset = 0;
  uint32_t size = 0;  // without the trailer
  uint32_t entries = 0;
  uint64_t delete_key_min = 0;
  uint64_t delete_key_max = 0;
  uint64_t filter_offset = 0;  // relative to the filter region
  uint32_t filter_size = 0;
  uint8_t compression = 0;  // a Compression value (options.h)
  uint32_t raw_size = 0;    // size decoded; equals size when not compressed
  uint32_t index = 0;  // position in the file (not stored: numbered when the index is read)
};

struct TileMeta {
  std::string smallest;  // sort keys, inclusive
  std::string largest;
  std::vector<PageMeta> pages;
};

// The index of `tiles` in the format this build writes, their pages'
// filter offsets less filter_base. Pages must lie in file order, and so must
// their filters (as the table builder writes them): each is stored as its
// distance from the end of the one before.
void EncodeIndex(std::span<const TileMeta> tiles, uint64_t filter_base, std::string* dst);
// `version` is the file's format version (Footer::version).
Status DecodeIndex(std::string_view input, uint32_t version, std::vector<TileMeta>* tiles);

// Reads an index block: its tile count, then each tile followed by its
// pages. Keys are views valid until the next ReadTile (into the input before
// format 4, into the reader's own copies since). Counts the input cannot
// hold are Corruption before anything is sized by them.
class IndexBlockReader {
 public:
  IndexBlockReader(std::string_view input, uint32_t version) : input_(input), version_(version) {}
  Status ReadTileCount(uint64_t* n);
  Status ReadTile(std::string_view* smallest, std::string_view* largest, uint32_t* pages);
  Status ReadPage(PageMeta* p);
  // Corruption if bytes remain.
  Status Finish() const;

 private:
  bool ReadSuffixedKey(std::string_view base, std::string* key);
  bool ReadCompactPage(PageMeta* p);

  std::string_view input_;
  uint32_t version_;
  // Format 4: the tile's keys, and where the next page and filter would
  // start if they follow the ones before without a gap.
  std::string smallest_, largest_;
  uint64_t page_end_ = 0, filter_end_ = 0;
};

// One partition of a partitioned index, as the top-level index lists it.
struct PartitionMeta {
  std::string smallest;  // its first tile's smallest sort key
  std::string largest;   // its last tile's largest sort key
  uint32_t tiles = 0;
  uint32_t pages = 0;
  BlockHandle handle;  // the partition block
};
void EncodeTopLevelIndex(const std::vector<PartitionMeta>& partitions, std::string* dst);
Status DecodeTopLevelIndex(std::string_view input, std::vector<PartitionMeta>* partitions);

// A partition block of `tiles`: their index, then their pages' filters
// (taken from `filters`, where the pages' filter offsets point).
void EncodePartition(std::span<const TileMeta> tiles, std::string_view filters, std::string* dst);
// A partition block's index and filters (views into `block`).
Status SplitPartition(std::string_view block, std::string_view* index, std::string_view* filters);
// *filters points into `block`.
Status DecodePartition(std::string_view block, uint32_t version, std::vector<TileMeta>* tiles,
                       std::string_view* filters);

struct TableProperties {
  uint64_t entries = 0;  // point entries of every kind
  uint64_t point_tombstones = 0;
  uint64_t merges = 0;
  uint64_t range_tombstones = 0;
  uint64_t raw_key_bytes = 0;
  uint64_t raw_value_bytes = 0;
  uint64_t delete_key_min = UINT64_MAX;
  uint64_t delete_key_max = 0;
  uint64_t smallest_seq = UINT64_MAX;
  uint64_t largest_seq = 0;
  uint64_t pages = 0;
  uint64_t tiles = 0;
  uint64_t pages_per_tile = 1;

  void EncodeTo(std::string* dst) const;
  Status DecodeFrom(std::string_view input);
};

}  // namespace lethe
