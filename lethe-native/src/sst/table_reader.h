// TableReader: lookups and iteration over one KiWi table file. The index,
// the Bloom filters and the range tombstones are held in memory; pages are
// read on demand through the shared page cache. The index is held compactly:
// the tiles' keys in one arena (TileKeys), every page's metadata in one
// array in file order.
//
// A point lookup binary-searches the tile fence pointers, then probes the
// Bloom filter of each of the tile's pages and reads only the pages that may
// hold the key (paper §4.2.2).
//
// Thread-safety: safe for concurrent use after Open.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cache/lru_cache.h"
#include "format/get_context.h"
#include "iterator/internal_iterator.h"
#include "lethe/env.h"
#include "format/range_tombstone.h"
#include "sst/page.h"
#include "sst/fence_index.h"
#include "sst/tile_keys.h"
#include "sst/table_format.h"
#include "util/striped_counter.h"

namespace lethe {

using PageCache = LruCache<const Page, 64>;

struct TableReadCounters {
  StripedCounter bytes_read;
  StripedCounter bloom_useful;
  StripedCounter opens;  // tables opened: their index and filters read whole
};

class TableReader;

// What a version says about a file's pages beyond its bytes: pages dropped
// by secondary deletes (skipped), and pages replaced by a patch table's
// page (patched[k] by the single page of the patch's tile k). Lists hold
// page indexes in file order, ascending; any pointer may be null.
struct PageOverrides {
  const std::vector<uint32_t>* dropped = nullptr;
  const std::vector<uint32_t>* patched = nullptr;
  const TableReader* patch = nullptr;
};

// One tile of an open table, as views into the reader (valid while it lives).
struct TileView {
  std::string_view smallest, largest;  // sort keys, inclusive
  std::span<const PageMeta> pages;     // in file order
};

class TableReader {
 public:
  struct Options {
    bool verify_checksums = true;
    PageCache* page_cache = nullptr;  // may be null
    // Or'ed into the page cache keys' file numbers: keeps databases that
    // share a cache apart.
    uint64_t cache_namespace = 0;
    TableReadCounters* counters = nullptr;  // may be null
  };

  static Status Open(const Options& options, std::string fname, uint64_t file_number,
                     std::unique_ptr<RandomAccessFile> file, uint64_t file_size,
                     std::unique_ptr<TableReader>* result);

  // Every read below applies `overrides` (may be null; it and what it
  // points to must outlive the call or the iterator).

  // Feeds the entries of ctx->key() visible at ctx->read_seq(), newest first.
  Status Get(GetContext* ctx, bool fill_cache, const PageOverrides* overrides = nullptr) const;
  // Get for several keys in one pass (`ctxs` sorted by key, none done):
  // the tiles of a few keys are found and their filters fetched before the
  // first filter is tested, so that those memory reads overlap. A key whose
  // page cannot be read fails alone (GetContext::Fail).
  void MultiGet(std::span<GetContext* const> ctxs, bool fill_cache, const PageOverrides* overrides = nullptr) const;
  // False only if no entry of `sort_key` is in this file (its tile's page
  // Bloom filters say so). Reads no page.
  bool MayContain(std::string_view sort_key, const PageOverrides* overrides = nullptr) const;

  std::unique_ptr<InternalIterator> NewIterator(bool fill_cache, const PageOverrides* overrides = nullptr) const;

  // The page that stands for `meta` under `overrides`: false if it was
  // dropped; otherwise *reader and *page name it (this table's page, or the
  // patch's). Corruption if a patched page has no page in the patch.
  Status EffectivePage(const PageMeta& meta, const PageOverrides* overrides, bool* present,
                       const TableReader** reader, const PageMeta** page) const;

  const std::vector<RangeTombstone>& range_tombstones() const { return tombstones_; }
  // Null if the table has no range tombstone.
  const std::shared_ptr<const FragmentedTombstones>& fragmented_tombstones() const { return fragmented_; }
  size_t tile_count() const { return tile_keys_.size(); }
  TileView tile(size_t t) const {
    return TileView{tile_keys_.smallest(t), tile_keys_.largest(t), TilePages(t)};
  }
  const TableProperties& properties() const { return props_; }
  const std::string& filename() const { return fname_; }
  // Memory the open reader holds: index, filters, fence keys, tombstones.
  size_t MemoryUsage() const { return memory_usage_; }

  // Reads one page (through the cache), decoded. Corruption names the file.
  Status ReadPage(const PageMeta& meta, bool fill_cache, PageRef* page) const;
  std::string_view PageFilter(const PageMeta& meta) const;

 private:
  TableReader() = default;
  Status ReadBlock(const BlockHandle& handle, std::string* contents) const;
  // Reads handle.size bytes plus the trailer into dst and verifies the CRC.
  Status ReadVerified(const BlockHandle& handle, char* dst) const;
  // Reads, verifies and decompresses one page into *page (no cache).
  Status ReadPageContents(const PageMeta& meta, Page* page) const;
  size_t ComputeMemoryUsage() const;
  // Packs the decoded tiles into tile_keys_, pages_ and tile_starts_; checks
  // every page against the data and filter regions.
  Status LoadIndex(std::vector<TileMeta> tiles, const Footer& footer);
  std::span<const PageMeta> TilePages(size_t t) const {
    if (tile_starts_.empty()) return std::span<const PageMeta>(pages_).subspan(t, 1);
    return std::span<const PageMeta>(pages_).subspan(tile_starts_[t], tile_starts_[t + 1] - tile_starts_[t]);
  }
  // Index of the first tile whose largest sort key >= key (tile_count() if none).
  size_t FindTile(std::string_view sort_key) const;
  // Get's steps. The tile that may hold ctx's key (tile_count() if none),
  // after feeding ctx the table's range tombstone covering it.
  size_t LocateTile(GetContext* ctx) const;
  // Starts reading tile t's first filter into the CPU cache.
  void PrefetchFilter(size_t t) const;
  // Reads the pages of tile t that may hold ctx's key (`filter_checked`:
  // the tile's single filter already said yes) and feeds ctx their entries.
  Status GetFromTile(GetContext* ctx, size_t t, bool filter_checked, bool fill_cache,
                     const PageOverrides* overrides) const;
  friend class TableIterator;

  Options options_;
  std::string fname_;
  uint64_t file_number_ = 0;
  std::unique_ptr<RandomAccessFile> file_;
  TileKeys tile_keys_;
  std::vector<PageMeta> pages_;        // every page in file order: pages_[i].index == i
  // Tile t's pages are [tile_starts_[t], tile_starts_[t + 1]); empty when
  // every tile has one page (tile t is page t), as with the default h = 1.
  std::vector<uint32_t> tile_starts_;
  FenceIndex fences_;  // over tile_keys_
  // False if the filter of tile t, when it has one page of its own, rules key
  // out; *checked says whether that filter was tested (the page's own test
  // is then done).
  bool SinglePageFilterMayContain(size_t t, std::string_view key, const PageOverrides* overrides,
                                  bool* checked) const;
  std::string filters_;
  std::vector<RangeTombstone> tombstones_;
  std::shared_ptr<const FragmentedTombstones> fragmented_;
  TableProperties props_;
  size_t memory_usage_ = 0;
};

}  // namespace lethe
