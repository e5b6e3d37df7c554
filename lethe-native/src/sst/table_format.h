// The KiWi table file (docs/formats.md, "Table file"):
//
//   data pages      page contents | masked crc32c fixed32, page after page;
//                   a delete tile's h pages are adjacent, in delete-key order
//   filter region   one Bloom filter per page (bloom.h), concatenated | crc
//   range tombstone block   count varint | (start lp | end lp | seq varint64)* | crc
//   index block     tile count varint | per tile: smallest lp | largest lp |
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
//                   format version fixed32 | magic fixed64
//
// Tiles have disjoint sort-key ranges in file order and never split the
// versions of one sort key; pages inside a tile are ordered by delete key
// and each page's entries by internal key. A page's size is what it takes
// on disk; a compressed page (compression.h) decodes to raw size bytes, and
// its checksum covers the stored bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lethe/status.h"

namespace lethe {

constexpr uint64_t kTableMagic = 0x4c45544845'4b4957ull;  // "LETHEKIW"
// Written by this build; every version from kOldestTableFormatVersion on is
// read. 2 added page compression.
constexpr uint32_t kTableFormatVersion = 2;
constexpr uint32_t kOldestTableFormatVersion = 1;
constexpr size_t kBlockTrailerSize = 4;  // masked crc32c after every block
constexpr size_t kFooterSize = 4 * 16 + 4 + 8;

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;  // without the trailer
};

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

// Always in the current format.
void EncodeIndex(const std::vector<TileMeta>& tiles, std::string* dst);
// `version` is the file's format version (Footer::version).
Status DecodeIndex(std::string_view input, uint32_t version, std::vector<TileMeta>* tiles);

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
