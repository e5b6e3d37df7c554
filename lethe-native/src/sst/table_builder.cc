#include "sst/table_builder.h"

#include <algorithm>
#include <numeric>

#include "format/internal_key.h"
#include "sst/compression.h"
#include "sst/tile_bounds.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace lethe {

TableBuilder::TableBuilder(const TableBuilderOptions& options, WritableFile* file)
    : options_(options), file_(file), bloom_(options.bloom_bits_per_key) {
  options_.pages_per_tile = std::max(1, options_.pages_per_tile);
  props_.pages_per_tile = static_cast<uint64_t>(options_.pages_per_tile);
}

void TableBuilder::Add(std::string_view ikey, std::string_view value, uint64_t delete_key) {
  std::string_view sort_key = ExtractSortKey(ikey);
  // Cut the tile only where the sort key changes, so a lookup reads one tile.
  if (tile_bytes_ >= options_.page_size * static_cast<size_t>(options_.pages_per_tile) &&
      sort_key != last_sort_key_) {
    FlushTile();
  }
  last_sort_key_.assign(sort_key);
  // Counted as the page will hold the tile in this order, so that pages come
  // out at page_size.
  const bool restart = tile_.size() % PageBuilder::kRestartInterval == 0;
  tile_bytes_ += PageBuilder::EntrySize(restart ? std::string_view() : EntryKey(tile_.back()), restart, ikey,
                                        value.size(), delete_key);
  tile_.push_back(Entry{tile_data_.size(), static_cast<uint32_t>(ikey.size()),
                        static_cast<uint32_t>(value.size()), delete_key});
  tile_data_.append(ikey.data(), ikey.size());
  tile_data_.append(value.data(), value.size());

  uint64_t tag = ExtractTag(ikey);
  props_.entries++;
  if (TagKind(tag) == EntryKind::kTombstone) props_.point_tombstones++;
  if (TagKind(tag) == EntryKind::kMerge) props_.merges++;
  props_.raw_key_bytes += ikey.size();
  props_.raw_value_bytes += value.size();
  props_.delete_key_min = std::min(props_.delete_key_min, delete_key);
  props_.delete_key_max = std::max(props_.delete_key_max, delete_key);
  props_.smallest_seq = std::min(props_.smallest_seq, TagSequence(tag));
  props_.largest_seq = std::max(props_.largest_seq, TagSequence(tag));
}

void TableBuilder::AddRangeTombstone(const RangeTombstone& t) {
  tombstones_.push_back(t);
  props_.range_tombstones++;
  props_.smallest_seq = std::min(props_.smallest_seq, t.seq);
  props_.largest_seq = std::max(props_.largest_seq, t.seq);
}

void TableBuilder::FlushTile() {
  if (tile_.empty()) return;
  TileMeta tile;
  tile.smallest.assign(ExtractSortKey(EntryKey(tile_.front())));
  tile.largest.assign(ExtractSortKey(EntryKey(tile_.back())));

  // Order by delete key (stable on position), cut into h parts of about
  // equal bytes, then write each part in internal-key order.
  std::vector<size_t> order(tile_.size());
  std::iota(order.begin(), order.end(), 0);
  if (options_.pages_per_tile > 1) {
    std::stable_sort(order.begin(), order.end(), [this](size_t a, size_t b) {
      return tile_[a].delete_key < tile_[b].delete_key;
    });
  }
  // The parts are balanced on key, value and a fixed 8 bytes per entry, so
  // that the split does not depend on how the order shares key prefixes.
  auto part_size = [](const Entry& e) { return e.key_size + e.value_size + 8; };
  size_t split_bytes = 0;
  for (const Entry& e : tile_) split_bytes += part_size(e);
  size_t pages = std::min<size_t>(static_cast<size_t>(options_.pages_per_tile), tile_.size());
  size_t target = (split_bytes + pages - 1) / pages;
  std::vector<size_t> part;
  size_t part_bytes = 0, written_pages = 0;
  auto emit = [&]() {
    std::sort(part.begin(), part.end());  // positions are in internal-key order
    std::vector<const Entry*> entries;
    entries.reserve(part.size());
    for (size_t i : part) entries.push_back(&tile_[i]);
    WritePage(entries, &tile);
    part.clear();
    part_bytes = 0;
    written_pages++;
  };
  for (size_t i = 0; i < order.size(); i++) {
    const Entry& e = tile_[order[i]];
    part.push_back(order[i]);
    part_bytes += part_size(e);
    size_t left = order.size() - i - 1;
    if (part_bytes >= target && written_pages + 1 < pages && left > 0) emit();
  }
  if (!part.empty()) emit();
  props_.tiles++;
  tiles_.push_back(std::move(tile));
  tile_.clear();
  tile_data_.clear();
  tile_bytes_ = 0;
}

void TableBuilder::WritePage(const std::vector<const Entry*>& entries, TileMeta* tile) {
  PageMeta meta;
  meta.delete_key_min = UINT64_MAX;
  meta.delete_key_max = 0;
  page_.Reset();
  std::string_view prev_sort_key;
  for (const Entry* e : entries) {
    page_.Add(EntryKey(*e), EntryValue(*e), e->delete_key);
    std::string_view sk = ExtractSortKey(EntryKey(*e));
    if (options_.bloom_bits_per_key > 0 && sk != prev_sort_key) bloom_.AddKey(sk);
    prev_sort_key = sk;
    meta.delete_key_min = std::min(meta.delete_key_min, e->delete_key);
    meta.delete_key_max = std::max(meta.delete_key_max, e->delete_key);
    meta.entries++;
  }
  std::string_view raw = page_.Finish();
  Compression used = CompressPage(options_.compression, raw, &compressed_);
  BlockHandle handle;
  WriteBlock(used == Compression::kNone ? raw : std::string_view(compressed_), &handle);
  meta.offset = handle.offset;
  meta.size = static_cast<uint32_t>(handle.size);
  meta.compression = static_cast<uint8_t>(used);
  meta.raw_size = static_cast<uint32_t>(raw.size());
  if (options_.bloom_bits_per_key > 0) {
    meta.filter_offset = filters_.size();
    bloom_.Finish(&filters_);
    meta.filter_size = static_cast<uint32_t>(filters_.size() - meta.filter_offset);
  }
  tile->pages.push_back(meta);
  props_.pages++;
}

void TableBuilder::WriteBlock(std::string_view contents, BlockHandle* handle) {
  handle->offset = offset_;
  handle->size = contents.size();
  if (!status_.ok()) return;
  char trailer[kBlockTrailerSize];
  EncodeFixed32(trailer, crc32c::Mask(crc32c::Value(contents.data(), contents.size())));
  status_ = file_->Append(contents);
  if (status_.ok()) status_ = file_->Append(std::string_view(trailer, kBlockTrailerSize));
  offset_ += contents.size() + kBlockTrailerSize;
}

std::string TableBuilder::WritePartitions(BlockHandle* region) {
  region->offset = offset_;
  // Whole sort keys as bounds would make the index as large as a page's data
  // where keys are long (a row as a map key): separators between tiles do.
  ShortenTileBounds(&tiles_);
  std::vector<PartitionMeta> partitions;
  std::string block;
  size_t begin = 0;
  size_t bytes = 0;  // index and filters of tiles [begin, t]
  const size_t limit = options_.index_partition_size == 0 ? SIZE_MAX : options_.index_partition_size;
  for (size_t t = 0; t < tiles_.size(); t++) {
    const TileMeta& tile = tiles_[t];
    // The partition as it is held once read (the unit the page cache charges):
    // the tile's keys whole, about 32 bytes of metadata per page, filters.
    // Format 4 stores it in fewer bytes on disk.
    bytes += tile.smallest.size() + tile.largest.size() + 4;
    for (const PageMeta& p : tile.pages) bytes += 32 + p.filter_size;
    if (bytes < limit && t + 1 < tiles_.size()) continue;
    const std::span<const TileMeta> run(tiles_.data() + begin, t + 1 - begin);
    PartitionMeta meta;
    meta.smallest = run.front().smallest;
    meta.largest = run.back().largest;
    meta.tiles = static_cast<uint32_t>(run.size());
    for (const TileMeta& r : run) meta.pages += static_cast<uint32_t>(r.pages.size());
    block.clear();
    EncodePartition(run, filters_, &block);
    WriteBlock(block, &meta.handle);
    partitions.push_back(std::move(meta));
    begin = t + 1;
    bytes = 0;
  }
  region->size = offset_ - region->offset;
  std::string top_level;
  EncodeTopLevelIndex(partitions, &top_level);
  return top_level;
}

Status TableBuilder::Finish() {
  FlushTile();
  closed_ = true;
  Footer footer;
  const std::string top_level = WritePartitions(&footer.filter);

  std::sort(tombstones_.begin(), tombstones_.end(),
            [](const RangeTombstone& a, const RangeTombstone& b) {
              return a.start != b.start ? a.start < b.start : a.seq > b.seq;
            });
  std::string block;
  PutVarint64(&block, tombstones_.size());
  for (const RangeTombstone& t : tombstones_) {
    PutLengthPrefixed(&block, t.start);
    PutLengthPrefixed(&block, t.end);
    PutVarint64(&block, t.seq);
  }
  WriteBlock(block, &footer.range_tombstones);

  WriteBlock(top_level, &footer.index);

  block.clear();
  props_.EncodeTo(&block);
  WriteBlock(block, &footer.properties);

  block.clear();
  footer.EncodeTo(&block);
  if (status_.ok()) status_ = file_->Append(block);
  offset_ += block.size();
  return status_;
}

}  // namespace lethe
