#include "sst/table_format.h"

#include <algorithm>

#include "sst/compression.h"
#include "util/coding.h"
#include "util/shared_prefix.h"

namespace lethe {

void Footer::EncodeTo(std::string* dst) const {
  for (const BlockHandle* h : {&filter, &range_tombstones, &index, &properties}) {
    PutFixed64(dst, h->offset);
    PutFixed64(dst, h->size);
  }
  PutFixed32(dst, version);
  PutFixed64(dst, kTableMagic);
}

Status Footer::DecodeFrom(std::string_view input) {
  if (input.size() != kFooterSize) return Status::Corruption("table footer has the wrong size");
  if (DecodeFixed64(input.data() + kFooterSize - 8) != kTableMagic) {
    return Status::Corruption("not a Lethe table file (bad magic)");
  }
  uint32_t version = DecodeFixed32(input.data() + 64);
  // The footer has no checksum of its own: an unknown version is as likely
  // a damaged byte as a newer format, and either way the file is unreadable.
  if (version < kOldestTableFormatVersion || version > kTableFormatVersion) {
    return Status::Corruption("unknown table format version (a damaged footer, or a newer format)",
                              std::to_string(version));
  }
  for (BlockHandle* h : {&filter, &range_tombstones, &index, &properties}) {
    GetFixed64(&input, &h->offset);
    GetFixed64(&input, &h->size);
  }
  this->version = version;
  return Status::OK();
}

namespace {

// A key as the length it shares with `base` and the rest.
void PutSuffixedKey(std::string* dst, std::string_view base, std::string_view key) {
  const size_t shared = SharedPrefixLength(base, key);
  PutVarint32(dst, static_cast<uint32_t>(shared));
  PutLengthPrefixed(dst, key.substr(shared));
}

}  // namespace

void EncodeIndex(std::span<const TileMeta> tiles, uint64_t filter_base, std::string* dst) {
  PutVarint64(dst, tiles.size());
  std::string_view previous;  // the key written last
  uint64_t page_end = 0, filter_end = 0;
  for (const TileMeta& t : tiles) {
    PutSuffixedKey(dst, previous, t.smallest);
    PutSuffixedKey(dst, t.smallest, t.largest);
    previous = t.largest;
    PutVarint32(dst, static_cast<uint32_t>(t.pages.size()));
    for (const PageMeta& p : t.pages) {
      PutVarint64(dst, p.offset - page_end);
      page_end = p.offset + p.size + kBlockTrailerSize;
      PutVarint32(dst, p.size);
      PutVarint32(dst, p.entries);
      PutVarint64(dst, p.delete_key_min + 1);  // wraps: no delete key (the maximum) takes one byte
      PutVarint64(dst, p.delete_key_max - p.delete_key_min);
      const uint64_t filter = p.filter_size == 0 ? filter_end : p.filter_offset - filter_base;
      PutVarint64(dst, filter - filter_end);
      filter_end = filter + p.filter_size;
      PutVarint32(dst, p.filter_size);
      dst->push_back(static_cast<char>(p.compression));
      PutVarint32(dst, p.raw_size);
    }
  }
}

void EncodeTopLevelIndex(const std::vector<PartitionMeta>& partitions, std::string* dst) {
  PutVarint64(dst, partitions.size());
  for (const PartitionMeta& p : partitions) {
    PutLengthPrefixed(dst, p.smallest);
    PutLengthPrefixed(dst, p.largest);
    PutVarint32(dst, p.tiles);
    PutVarint32(dst, p.pages);
    PutVarint64(dst, p.handle.offset);
    PutVarint64(dst, p.handle.size);
  }
}

Status DecodeTopLevelIndex(std::string_view input, std::vector<PartitionMeta>* partitions) {
  constexpr size_t kMinPartitionBytes = 6;  // empty keys and one-byte varints
  uint64_t n;
  if (!GetVarint64(&input, &n) || n > input.size() / kMinPartitionBytes) {
    return Status::Corruption("bad top-level index");
  }
  partitions->resize(n);
  for (PartitionMeta& p : *partitions) {
    std::string_view smallest, largest;
    if (!GetLengthPrefixed(&input, &smallest) || !GetLengthPrefixed(&input, &largest) ||
        !GetVarint32(&input, &p.tiles) || !GetVarint32(&input, &p.pages) || p.tiles == 0 || p.pages < p.tiles ||
        !GetVarint64(&input, &p.handle.offset) || !GetVarint64(&input, &p.handle.size)) {
      return Status::Corruption("bad partition in top-level index");
    }
    p.smallest.assign(smallest);
    p.largest.assign(largest);
  }
  if (!input.empty()) return Status::Corruption("trailing bytes in top-level index");
  return Status::OK();
}

void EncodePartition(std::span<const TileMeta> tiles, std::string_view filters, std::string* dst) {
  // The pages' filters are adjacent in page order: one run of `filters`.
  uint64_t begin = UINT64_MAX, end = 0;
  for (const TileMeta& t : tiles) {
    for (const PageMeta& p : t.pages) {
      if (p.filter_size == 0) continue;
      begin = std::min(begin, p.filter_offset);
      end = std::max(end, p.filter_offset + p.filter_size);
    }
  }
  if (begin > end) begin = end = 0;
  std::string index;
  EncodeIndex(tiles, begin, &index);
  PutVarint32(dst, static_cast<uint32_t>(index.size()));
  dst->append(index);
  dst->append(filters.substr(begin, end - begin));
}

Status SplitPartition(std::string_view block, std::string_view* index, std::string_view* filters) {
  uint32_t index_size;
  if (!GetVarint32(&block, &index_size) || index_size > block.size()) {
    return Status::Corruption("bad index partition");
  }
  *index = block.substr(0, index_size);
  *filters = block.substr(index_size);
  return Status::OK();
}

Status DecodePartition(std::string_view block, uint32_t version, std::vector<TileMeta>* tiles,
                       std::string_view* filters) {
  std::string_view index;
  Status s = SplitPartition(block, &index, filters);
  return s.ok() ? DecodeIndex(index, version, tiles) : s;
}

namespace {

// The fewest bytes a page's and a tile's index entries take (varints of one
// byte, empty keys): counts above input size / these are damage, caught
// before they size a vector (a TileMeta is about four times its encoding).
// Format 1 pages lack the compression fields; format 4 stores keys as a
// shared length and a suffix, and every number of a page as a varint.
constexpr size_t kMinPageIndexBytes = 1 + 1 + 1 + 8 + 8 + 1 + 1;
constexpr size_t kMinTileIndexBytes = 1 + 1 + 1 + kMinPageIndexBytes;
constexpr size_t kMinCompactPageIndexBytes = 9;
constexpr size_t kMinCompactTileIndexBytes = 2 + 2 + 1 + kMinCompactPageIndexBytes;

// The compression fields of format 2 on, checked against the codecs known
// and kMaxCompressionRatio; format 1 pages are stored as they are.
bool DecodePageCompression(std::string_view* input, uint32_t version, PageMeta* p) {
  if (version < 2) {
    p->compression = static_cast<uint8_t>(Compression::kNone);
    p->raw_size = p->size;
    return true;
  }
  if (input->empty()) return false;
  p->compression = static_cast<uint8_t>((*input)[0]);
  input->remove_prefix(1);
  if (!GetVarint32(input, &p->raw_size) || !KnownCompression(p->compression)) return false;
  if (p->compression == static_cast<uint8_t>(Compression::kNone)) return p->raw_size == p->size;
  return p->raw_size / kMaxCompressionRatio <= p->size;
}

}  // namespace

Status IndexBlockReader::ReadTileCount(uint64_t* n) {
  const size_t min_tile = version_ >= kFirstCompactIndexFormatVersion ? kMinCompactTileIndexBytes : kMinTileIndexBytes;
  if (!GetVarint64(&input_, n) || *n > input_.size() / min_tile) return Status::Corruption("bad index block");
  return Status::OK();
}

bool IndexBlockReader::ReadSuffixedKey(std::string_view base, std::string* key) {
  uint32_t shared;
  std::string_view suffix;
  if (!GetVarint32(&input_, &shared) || shared > base.size() || !GetLengthPrefixed(&input_, &suffix)) return false;
  key->assign(base.substr(0, shared));
  key->append(suffix);
  return true;
}

Status IndexBlockReader::ReadTile(std::string_view* smallest, std::string_view* largest, uint32_t* pages) {
  const bool compact = version_ >= kFirstCompactIndexFormatVersion;
  bool ok;
  if (compact) {
    // smallest_ from the last tile's largest_, then largest_ from smallest_.
    ok = ReadSuffixedKey(largest_, &smallest_) && ReadSuffixedKey(smallest_, &largest_);
    *smallest = smallest_;
    *largest = largest_;
  } else {
    ok = GetLengthPrefixed(&input_, smallest) && GetLengthPrefixed(&input_, largest);
  }
  const size_t min_page = compact ? kMinCompactPageIndexBytes : kMinPageIndexBytes;
  if (!ok || !GetVarint32(&input_, pages) || *pages == 0 || *pages > input_.size() / min_page) {
    return Status::Corruption("bad tile in index block");
  }
  return Status::OK();
}

bool IndexBlockReader::ReadCompactPage(PageMeta* p) {
  uint64_t offset_gap, min_plus_one, span, filter_gap;
  if (!GetVarint64(&input_, &offset_gap) || offset_gap > UINT64_MAX - page_end_ || !GetVarint32(&input_, &p->size) ||
      !GetVarint32(&input_, &p->entries) || !GetVarint64(&input_, &min_plus_one) || !GetVarint64(&input_, &span) ||
      !GetVarint64(&input_, &filter_gap) || filter_gap > UINT64_MAX - filter_end_ ||
      !GetVarint32(&input_, &p->filter_size) || !DecodePageCompression(&input_, version_, p)) {
    return false;
  }
  p->offset = page_end_ + offset_gap;
  page_end_ = p->offset + p->size + kBlockTrailerSize;  // a page past the data region is Corruption later
  p->delete_key_min = min_plus_one - 1;
  p->delete_key_max = p->delete_key_min + span;
  const uint64_t filter = filter_end_ + filter_gap;
  filter_end_ = filter + p->filter_size;
  p->filter_offset = p->filter_size == 0 ? 0 : filter;
  return true;
}

Status IndexBlockReader::ReadPage(PageMeta* p) {
  bool ok;
  if (version_ >= kFirstCompactIndexFormatVersion) {
    ok = ReadCompactPage(p);
  } else {
    ok = GetVarint64(&input_, &p->offset) && GetVarint32(&input_, &p->size) && GetVarint32(&input_, &p->entries) &&
         GetFixed64(&input_, &p->delete_key_min) && GetFixed64(&input_, &p->delete_key_max) &&
         GetVarint64(&input_, &p->filter_offset) && GetVarint32(&input_, &p->filter_size) &&
         DecodePageCompression(&input_, version_, p);
  }
  return ok ? Status::OK() : Status::Corruption("bad page in index block");
}

Status IndexBlockReader::Finish() const {
  return input_.empty() ? Status::OK() : Status::Corruption("trailing bytes in index block");
}

Status DecodeIndex(std::string_view input, uint32_t version, std::vector<TileMeta>* tiles) {
  IndexBlockReader reader(input, version);
  uint64_t n;
  Status s = reader.ReadTileCount(&n);
  if (!s.ok()) return s;
  tiles->resize(n);
  for (TileMeta& t : *tiles) {
    std::string_view smallest, largest;
    uint32_t pages;
    if (!(s = reader.ReadTile(&smallest, &largest, &pages)).ok()) return s;
    t.smallest.assign(smallest);
    t.largest.assign(largest);
    t.pages.resize(pages);
    for (PageMeta& p : t.pages) {
      if (!(s = reader.ReadPage(&p)).ok()) return s;
    }
  }
  return reader.Finish();
}

namespace {
// Property tags; never reuse a number.
enum PropTag : uint32_t {
  kEntries = 1, kPointTombstones = 2, kMerges = 3, kRangeTombstones = 4, kRawKeyBytes = 5,
  kRawValueBytes = 6, kDeleteKeyMin = 7, kDeleteKeyMax = 8, kSmallestSeq = 9, kLargestSeq = 10,
  kPages = 11, kTiles = 12, kPagesPerTile = 13,
};
}  // namespace

void TableProperties::EncodeTo(std::string* dst) const {
  auto put = [dst](PropTag tag, uint64_t v) {
    PutVarint32(dst, tag);
    PutVarint64(dst, v);
  };
  put(kEntries, entries);
  put(kPointTombstones, point_tombstones);
  put(kMerges, merges);
  put(kRangeTombstones, range_tombstones);
  put(kRawKeyBytes, raw_key_bytes);
  put(kRawValueBytes, raw_value_bytes);
  put(kDeleteKeyMin, delete_key_min);
  put(kDeleteKeyMax, delete_key_max);
  put(kSmallestSeq, smallest_seq);
  put(kLargestSeq, largest_seq);
  put(kPages, pages);
  put(kTiles, tiles);
  put(kPagesPerTile, pages_per_tile);
}

Status TableProperties::DecodeFrom(std::string_view input) {
  while (!input.empty()) {
    uint32_t tag;
    uint64_t v;
    if (!GetVarint32(&input, &tag) || !GetVarint64(&input, &v)) {
      return Status::Corruption("bad properties block");
    }
    switch (tag) {
      case kEntries: entries = v; break;
      case kPointTombstones: point_tombstones = v; break;
      case kMerges: merges = v; break;
      case kRangeTombstones: range_tombstones = v; break;
      case kRawKeyBytes: raw_key_bytes = v; break;
      case kRawValueBytes: raw_value_bytes = v; break;
      case kDeleteKeyMin: delete_key_min = v; break;
      case kDeleteKeyMax: delete_key_max = v; break;
      case kSmallestSeq: smallest_seq = v; break;
      case kLargestSeq: largest_seq = v; break;
      case kPages: pages = v; break;
      case kTiles: tiles = v; break;
      case kPagesPerTile: pages_per_tile = v; break;
      default: break;  // a property from a newer writer: ignorable by design
    }
  }
  return Status::OK();
}

}  // namespace lethe
