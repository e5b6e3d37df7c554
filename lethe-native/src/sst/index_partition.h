// IndexPartition: the index and Bloom filters of a run of consecutive tiles
// of one table, decoded and packed for lookups: the tiles' keys in one arena
// (TileKeys), their pages' metadata in one array in file order, a FenceIndex
// over the keys, and the pages' filters in one string.
//
// A table of format 3 on splits its index into partitions of a few KiB, each
// a block of its own that readers load on demand through the page cache
// (table_reader.h); a table of an older format is one partition.
//
// Thread-safety: immutable once built; safe for concurrent readers.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lethe/status.h"
#include "sst/fence_index.h"
#include "sst/table_format.h"
#include "sst/tile_keys.h"

namespace lethe {

// One tile, as views into its partition (valid while the partition lives).
struct TileView {
  std::string_view smallest, largest;  // sort keys, inclusive
  std::span<const PageMeta> pages;     // in file order
};

class IndexPartition {
 public:
  // Decodes index blocks, in file order, into one partition. Call order:
  // Add* Finish.
  class Builder {
   public:
    // Pages are numbered from first_page (their position in the table);
    // each must lie before data_limit, the end of the table's data region.
    Builder(uint32_t version, uint32_t first_page, uint64_t data_limit);
    // One index block and the filters its pages' filter offsets point
    // into. Corruption (without a file name) if it is malformed or a page
    // lies outside.
    Status Add(std::string_view index, std::string_view filters);
    size_t tiles() const { return p_->keys_.size(); }
    size_t pages() const { return p_->pages_.size(); }
    std::string_view smallest(size_t t) const { return p_->keys_.smallest(t); }
    std::string_view largest(size_t t) const { return p_->keys_.largest(t); }
    std::unique_ptr<IndexPartition> Finish();

   private:
    std::unique_ptr<IndexPartition> p_;
    uint32_t version_, first_page_;
    uint64_t data_limit_;
    bool one_page_each_ = true;
  };

  IndexPartition(const IndexPartition&) = delete;
  IndexPartition& operator=(const IndexPartition&) = delete;

  size_t tile_count() const { return keys_.size(); }
  std::span<const PageMeta> pages() const { return pages_; }  // in file order
  TileView tile(size_t t) const { return TileView{keys_.smallest(t), keys_.largest(t), TilePages(t)}; }
  std::span<const PageMeta> TilePages(size_t t) const {
    if (tile_starts_.empty()) return std::span<const PageMeta>(pages_).subspan(t, 1);
    return std::span<const PageMeta>(pages_).subspan(tile_starts_[t], tile_starts_[t + 1] - tile_starts_[t]);
  }
  // The first tile whose largest sort key is >= key (tile_count() if none).
  size_t FindTile(std::string_view key) const { return fences_.LowerBound(key); }
  // Whether key sorts before tile t's smallest key.
  bool BeforeTile(size_t t, std::string_view key) const { return fences_.BeforeTile(t, key); }
  // The Bloom filter of one of this partition's pages (empty if none).
  std::string_view Filter(const PageMeta& meta) const {
    if (meta.filter_size == 0) return {};
    return std::string_view(filters_).substr(meta.filter_offset, meta.filter_size);
  }
  // Heap memory held, this object included.
  size_t MemoryUsage() const;

 private:
  IndexPartition() = default;

  TileKeys keys_;
  std::vector<PageMeta> pages_;  // in file order: pages_[i].index == first page + i
  // Tile t's pages are [tile_starts_[t], tile_starts_[t + 1]); empty when
  // every tile has one page (tile t is page t), as with the default h = 1.
  std::vector<uint32_t> tile_starts_;
  FenceIndex fences_;  // over keys_
  std::string filters_;
};

using PartitionRef = std::shared_ptr<const IndexPartition>;

}  // namespace lethe
