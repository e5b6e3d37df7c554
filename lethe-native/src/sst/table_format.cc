#include "sst/table_format.h"

#include "sst/compression.h"
#include "util/coding.h"

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

void EncodeIndex(const std::vector<TileMeta>& tiles, std::string* dst) {
  PutVarint64(dst, tiles.size());
  for (const TileMeta& t : tiles) {
    PutLengthPrefixed(dst, t.smallest);
    PutLengthPrefixed(dst, t.largest);
    PutVarint32(dst, static_cast<uint32_t>(t.pages.size()));
    for (const PageMeta& p : t.pages) {
      PutVarint64(dst, p.offset);
      PutVarint32(dst, p.size);
      PutVarint32(dst, p.entries);
      PutFixed64(dst, p.delete_key_min);
      PutFixed64(dst, p.delete_key_max);
      PutVarint64(dst, p.filter_offset);
      PutVarint32(dst, p.filter_size);
      dst->push_back(static_cast<char>(p.compression));
      PutVarint32(dst, p.raw_size);
    }
  }
}

namespace {

// The fewest bytes a page's and a tile's index entries take (varints of one
// byte, empty keys): counts above input size / these are damage, caught
// before they size a vector (a TileMeta is about four times its encoding).
// Format 1 pages lack the last two fields.
constexpr size_t kMinPageIndexBytes = 1 + 1 + 1 + 8 + 8 + 1 + 1;
constexpr size_t kMinTileIndexBytes = 1 + 1 + 1 + kMinPageIndexBytes;

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

Status DecodeIndex(std::string_view input, uint32_t version, std::vector<TileMeta>* tiles) {
  uint64_t n;
  if (!GetVarint64(&input, &n) || n > input.size() / kMinTileIndexBytes) {
    return Status::Corruption("bad index block");
  }
  tiles->resize(n);
  for (TileMeta& t : *tiles) {
    std::string_view smallest, largest;
    uint32_t pages;
    if (!GetLengthPrefixed(&input, &smallest) || !GetLengthPrefixed(&input, &largest) ||
        !GetVarint32(&input, &pages) || pages == 0 || pages > input.size() / kMinPageIndexBytes) {
      return Status::Corruption("bad tile in index block");
    }
    t.smallest.assign(smallest);
    t.largest.assign(largest);
    t.pages.resize(pages);
    for (PageMeta& p : t.pages) {
      if (!GetVarint64(&input, &p.offset) || !GetVarint32(&input, &p.size) ||
          !GetVarint32(&input, &p.entries) || !GetFixed64(&input, &p.delete_key_min) ||
          !GetFixed64(&input, &p.delete_key_max) || !GetVarint64(&input, &p.filter_offset) ||
          !GetVarint32(&input, &p.filter_size) || !DecodePageCompression(&input, version, &p)) {
        return Status::Corruption("bad page in index block");
      }
    }
  }
  if (!input.empty()) return Status::Corruption("trailing bytes in index block");
  return Status::OK();
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
