// TableReader: lookups and iteration over one KiWi table file. Pages are
// read on demand through the shared page cache. The index and the Bloom
// filters come in partitions (index_partition.h), each covering a run of
// consecutive tiles. The reader holds the top-level index (one entry per
// partition) and the range tombstones. It keeps the whole index in memory,
// merged into one partition, when asked to (Options::pin_index or
// KeepWholeIndex), when the table has one partition, or without a page
// cache; otherwise a partition is read when a lookup needs it and lives in
// the page cache, charged like a page. A table of an older format has no
// partitions: its whole index is read at open.
//
// A point lookup binary-searches the top-level index, then the partition's
// tile fence pointers, then probes the Bloom filter of each of the tile's
// pages and reads only the pages that may hold the key.
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
#include "sst/fence_index.h"
#include "sst/index_partition.h"
#include "sst/page.h"
#include "sst/tile_keys.h"
#include "sst/table_format.h"
#include "util/striped_counter.h"

namespace lethe {

// Holds decoded pages and index partitions (told apart by their keys).
using PageCache = LruCache<const void, 64>;

struct TableReadCounters {
  StripedCounter bytes_read;
  StripedCounter bloom_useful;
  StripedCounter opens;  // tables opened: their top-level index (older formats: whole index) read
  StripedCounter partition_reads;  // index partitions read from the file
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

// One key of a batched lookup and the table to look it up in.
struct TableProbe {
  const TableReader* table = nullptr;
  const PageOverrides* overrides = nullptr;  // may be null
  GetContext* ctx = nullptr;
};

// Where the entries of a page are read: this table's page, or the page of
// a patch table that replaced it.
struct PageSource {
  const TableReader* reader = nullptr;
  const IndexPartition* partition = nullptr;  // holds meta and its filter
  const PageMeta* meta = nullptr;
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
    // Keep the whole index in memory for the reader's lifetime.
    bool pin_index = false;
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
  // MultiGet for keys of several tables at once (the probes of one table
  // sorted by key, no context done), so that the memory waits of keys in
  // different tables overlap too: each step (tile, filter, cached page,
  // restart points, search) is taken for a wave of keys before the next.
  static void MultiGet(std::span<const TableProbe> probes, bool fill_cache);
  // False only if no entry of `sort_key` is in this file (its tile's page
  // Bloom filters say so). Reads no page.
  bool MayContain(std::string_view sort_key, const PageOverrides* overrides = nullptr) const;

  std::unique_ptr<InternalIterator> NewIterator(bool fill_cache, const PageOverrides* overrides = nullptr) const;

  // The page that stands for `own` (a page of `part`, a partition of this
  // table) under `overrides`: *present false if it was dropped; otherwise
  // *source names it (this table's page, or the patch's). Corruption if a
  // patched page has no page in the patch, or the patch's index is not in
  // memory (patch tables are written as one partition).
  Status EffectivePage(const IndexPartition& part, const PageMeta& own, const PageOverrides* overrides,
                       bool* present, PageSource* source) const;

  const std::vector<RangeTombstone>& range_tombstones() const { return tombstones_; }
  // Null if the table has no range tombstone.
  const std::shared_ptr<const FragmentedTombstones>& fragmented_tombstones() const { return fragmented_; }
  // Reads every index partition and keeps them, merged into one, for the
  // reader's lifetime. Only before the reader is shared.
  Status KeepWholeIndex();
  // Bytes of the index partitions in the file that the reader does not keep
  // (0 once it keeps its whole index).
  size_t PartitionBytes() const;

  size_t tile_count() const { return part_first_tile_.back(); }
  // Partitions as read: 1 for a reader that keeps its whole index.
  size_t partition_count() const { return part_first_tile_.size() - 1; }
  // Index partition p, from memory, the page cache or the file (then cached
  // if fill_cache).
  Status ReadPartition(size_t p, bool fill_cache, PartitionRef* out) const;
  // Every partition, in file order (none cached that was not).
  Status ReadPartitions(std::vector<PartitionRef>* out) const;
  const TableProperties& properties() const { return props_; }
  const std::string& filename() const { return fname_; }
  // Memory the open reader holds: the top-level index, the partitions kept
  // in memory, tombstones.
  size_t MemoryUsage() const { return memory_usage_; }

  // Reads one page (through the cache), decoded. Corruption names the file.
  Status ReadPage(const PageMeta& meta, bool fill_cache, PageRef* page) const;
  // ReadPage's two halves: the page from the cache (false if not there),
  // and from the file (then cached if fill_cache).
  bool LookupPage(const PageMeta& meta, PageRef* page) const;
  // Starts fetching into the CPU cache what LookupPage reads first.
  void PrefetchPageLookup(const PageMeta& meta) const;
  Status LoadPage(const PageMeta& meta, bool fill_cache, PageRef* page) const;
  // Whether the page's stored bytes and checksum read as all zero: a hole
  // punched where the engine dropped the page, or bytes lost. Only the
  // manifest tells the two apart; a tool without it can at least say which.
  bool PageIsHole(const PageMeta& meta) const;

 private:
  TableReader() = default;
  // A tile found for a key: its partition (kept alive by holder unless the
  // reader keeps it in memory) and its number there.
  struct TileSpot {
    size_t partition = SIZE_MAX;  // SIZE_MAX: no tile may hold the key
    const IndexPartition* part = nullptr;
    size_t tile = 0;
    bool found() const { return partition != SIZE_MAX; }
  };

  CacheKey PageCacheKey(const PageMeta& meta) const {
    return CacheKey{options_.cache_namespace | file_number_, meta.offset};
  }
  Status ReadBlock(const BlockHandle& handle, std::string* contents) const;
  // Reads handle.size bytes plus the trailer into dst and verifies the CRC.
  Status ReadVerified(const BlockHandle& handle, char* dst) const;
  // Reads, verifies and decompresses one page into *page (no cache).
  Status ReadPageContents(const PageMeta& meta, Page* page) const;
  size_t ComputeMemoryUsage() const;
  // Reads the index: the whole index as one partition (formats 1, 2), or
  // the top-level index and, if kept in memory, every partition.
  Status LoadIndex(const Footer& footer);
  Status LoadWholeIndex(const Footer& footer);
  Status LoadTopLevelIndex(const Footer& footer);
  // Makes `whole` the reader's only partition, the top-level index describing it.
  void AdoptWholeIndex(std::unique_ptr<IndexPartition> whole);
  // Reads partition p's block into *builder, checked against the top-level index.
  Status AddPartition(size_t p, IndexPartition::Builder* builder) const;
  // Reads and builds partition p from the file.
  Status ReadPartitionBlock(size_t p, std::unique_ptr<IndexPartition>* out) const;
  // Partition p: *part points at it; *holder keeps it alive unless it is kept in memory.
  Status GetPartition(size_t p, bool fill_cache, PartitionRef* holder, const IndexPartition** part) const;
  // The partition that may hold key (partition_count() if none).
  size_t FindPartition(std::string_view key) const;
  // The tile that may hold key (*spot not found() if none). `hint`: a spot
  // found before, whose partition is reused when it is key's.
  Status FindSpot(std::string_view key, bool fill_cache, const TileSpot* hint, PartitionRef* holder,
                  TileSpot* spot) const;
  // Get's steps. FindSpot for ctx's key, after feeding ctx the table's range
  // tombstone covering it.
  Status LocateTile(GetContext* ctx, bool fill_cache, const TileSpot* hint, PartitionRef* holder,
                    TileSpot* spot) const;
  // Starts reading the spot's first filter into the CPU cache.
  static void PrefetchFilter(const TileSpot& spot);
  // False if the spot's tile has one page of its own and its filter rules
  // key out; *checked says whether that filter was tested (the page's own
  // test is then done).
  bool SinglePageFilterMayContain(const TileSpot& spot, std::string_view key, const PageOverrides* overrides,
                                  bool* checked) const;
  // Reads the pages of the spot's tile that may hold ctx's key
  // (`filter_checked`: the tile's single filter already said yes) and feeds
  // ctx their entries.
  Status GetFromTile(GetContext* ctx, const TileSpot& spot, bool filter_checked, bool fill_cache,
                     const PageOverrides* overrides) const;
  // From where *it stands (a page iterator sought to `key`'s seek key),
  // calls visit(seq, kind, value, delete_key) for the entries of `key` a
  // lookup sees, newest first, until visit returns true or an entry that is
  // not a merge operand was visited. Corruption names the file.
  template <typename Visit>
  Status VisitPageEntries(PageIterator* it, std::string_view key, Visit&& visit) const;
  // The wave steps of the static MultiGet.
  struct Wave;
  static void LocateWave(Wave* w, bool fill_cache);
  static void ReadWavePages(Wave* w, bool fill_cache);
  static void SearchWavePages(Wave* w);
  friend class TableIterator;

  Options options_;
  std::string fname_;
  uint64_t file_number_ = 0;
  std::unique_ptr<RandomAccessFile> file_;
  uint32_t format_version_ = 0;
  uint64_t data_limit_ = 0;  // where the data region ends
  // The top-level index: partition p covers tiles [part_first_tile_[p],
  // part_first_tile_[p + 1]) and pages likewise; part_keys_ holds its first
  // tile's smallest and its last tile's largest key.
  TileKeys part_keys_;
  FenceIndex part_fences_;  // over part_keys_
  std::vector<uint32_t> part_first_tile_ = {0};
  std::vector<uint32_t> part_first_page_ = {0};
  std::vector<BlockHandle> part_handles_;  // format 3 on, unless the whole index is kept
  PartitionRef whole_;                     // the whole index when kept: the only partition
  std::vector<RangeTombstone> tombstones_;
  std::shared_ptr<const FragmentedTombstones> fragmented_;
  TableProperties props_;
  size_t memory_usage_ = 0;
};

}  // namespace lethe
