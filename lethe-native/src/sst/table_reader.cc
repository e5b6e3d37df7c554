#include "sst/table_reader.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <vector>

#include "iterator/merging_iterator.h"
#include "sst/bloom.h"
#include "sst/compression.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace lethe {
namespace {

// Whether [offset, offset + size + trailer) lies inside [0, limit), without
// wrapping.
bool FitsIn(uint64_t offset, uint64_t size, uint64_t limit, uint64_t trailer) {
  return offset <= limit && size <= limit - offset && trailer <= limit - offset - size;
}

}  // namespace

Status TableReader::EffectivePage(const PageMeta& meta, const PageOverrides* o, bool* present,
                                  const TableReader** reader, const PageMeta** page) const {
  *present = true;
  *reader = this;
  *page = &meta;
  if (o == nullptr) return Status::OK();
  if (o->dropped != nullptr && !o->dropped->empty() &&
      std::binary_search(o->dropped->begin(), o->dropped->end(), meta.index)) {
    *present = false;
    return Status::OK();
  }
  if (o->patched == nullptr || o->patched->empty()) return Status::OK();
  auto it = std::lower_bound(o->patched->begin(), o->patched->end(), meta.index);
  if (it == o->patched->end() || *it != meta.index) return Status::OK();
  const size_t slot = static_cast<size_t>(it - o->patched->begin());
  if (o->patch == nullptr || slot >= o->patch->tile_count() || o->patch->TilePages(slot).size() != 1) {
    return Status::Corruption(fname_, "patched page " + std::to_string(meta.index) + " missing from its patch table");
  }
  *reader = o->patch;
  *page = &o->patch->TilePages(slot)[0];
  return Status::OK();
}

Status TableReader::Open(const Options& options, std::string fname, uint64_t file_number,
                         std::unique_ptr<RandomAccessFile> file, uint64_t file_size,
                         std::unique_ptr<TableReader>* result) {
  if (options.counters) options.counters->opens.Add(1);
  std::unique_ptr<TableReader> r(new TableReader());
  r->options_ = options;
  r->fname_ = std::move(fname);
  r->file_number_ = file_number;
  r->file_ = std::move(file);
  if (file_size < kFooterSize) return Status::Corruption(r->fname_, "file too short to be a table");
  char footer_buf[kFooterSize];
  std::string_view footer_input;
  Status s = r->file_->Read(file_size - kFooterSize, kFooterSize, &footer_input, footer_buf);
  if (!s.ok()) return s;
  Footer footer;
  s = footer.DecodeFrom(footer_input);
  if (!s.ok()) return Status(s.code() == Status::Code::kNotSupported
                                 ? Status::NotSupported(r->fname_, s.message())
                                 : Status::Corruption(r->fname_, s.message()));
  // Bounds checks are written so that no sum can wrap: handles and page
  // metadata come from the file and may hold any 64-bit value.
  for (const BlockHandle* h : {&footer.filter, &footer.range_tombstones, &footer.index,
                               &footer.properties}) {
    if (!FitsIn(h->offset, h->size, file_size - kFooterSize, kBlockTrailerSize)) {
      return Status::Corruption(r->fname_, "block handle outside the file");
    }
  }
  std::string block;
  if (!(s = r->ReadBlock(footer.index, &block)).ok()) return s;
  std::vector<TileMeta> tiles;
  if (!(s = DecodeIndex(block, footer.version, &tiles)).ok()) return Status::Corruption(r->fname_, s.message());
  if (!(s = r->LoadIndex(std::move(tiles), footer)).ok()) return s;
  if (!(s = r->ReadBlock(footer.filter, &r->filters_)).ok()) return s;
  if (!(s = r->ReadBlock(footer.properties, &block)).ok()) return s;
  if (!(s = r->props_.DecodeFrom(block)).ok()) return Status::Corruption(r->fname_, s.message());
  if (!(s = r->ReadBlock(footer.range_tombstones, &block)).ok()) return s;
  std::string_view input(block);
  uint64_t n;
  if (!GetVarint64(&input, &n) || n > input.size()) {
    return Status::Corruption(r->fname_, "bad range tombstone block");
  }
  for (uint64_t i = 0; i < n; i++) {
    std::string_view start, end;
    uint64_t seq;
    if (!GetLengthPrefixed(&input, &start) || !GetLengthPrefixed(&input, &end) ||
        !GetVarint64(&input, &seq)) {
      return Status::Corruption(r->fname_, "bad range tombstone");
    }
    r->tombstones_.push_back(RangeTombstone{std::string(start), std::string(end), seq});
  }
  if (!r->tombstones_.empty()) r->fragmented_ = std::make_shared<const FragmentedTombstones>(r->tombstones_);
  r->memory_usage_ = r->ComputeMemoryUsage();
  *result = std::move(r);
  return Status::OK();
}

Status TableReader::LoadIndex(std::vector<TileMeta> tiles, const Footer& footer) {
  size_t pages = 0;
  for (const TileMeta& t : tiles) pages += t.pages.size();
  if (pages > UINT32_MAX) return Status::Corruption(fname_, "too many pages");
  pages_.reserve(pages);
  const bool one_page_each =
      std::all_of(tiles.begin(), tiles.end(), [](const TileMeta& t) { return t.pages.size() == 1; });
  if (!one_page_each) tile_starts_.reserve(tiles.size() + 1);
  for (size_t t = 0; t < tiles.size(); t++) {
    TileMeta& tile = tiles[t];
    if (!tile_keys_.Add(tile.smallest, tile.largest)) return Status::Corruption(fname_, "index keys over 4 GiB");
    if (!one_page_each) tile_starts_.push_back(static_cast<uint32_t>(pages_.size()));
    for (PageMeta& p : tile.pages) {
      p.index = static_cast<uint32_t>(pages_.size());
      if (!FitsIn(p.offset, p.size, footer.filter.offset, kBlockTrailerSize) ||
          !FitsIn(p.filter_offset, p.filter_size, footer.filter.size, 0)) {
        return Status::Corruption(fname_, "page outside the data region");
      }
      pages_.push_back(p);
    }
    tile = TileMeta();  // gives its memory back as it goes
  }
  if (!one_page_each) tile_starts_.push_back(static_cast<uint32_t>(pages_.size()));
  tile_keys_.Shrink();
  fences_.Build(&tile_keys_);
  return Status::OK();
}

// A string's heap block, if it has one (beyond the short-string buffer).
static size_t HeapBytes(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

size_t TableReader::ComputeMemoryUsage() const {
  size_t n = sizeof(*this) + HeapBytes(fname_) + fences_.MemoryUsage() + HeapBytes(filters_);
  n += tile_keys_.MemoryUsage() + pages_.capacity() * sizeof(PageMeta) + tile_starts_.capacity() * sizeof(uint32_t);
  size_t tombstones = tombstones_.capacity() * sizeof(RangeTombstone);
  for (const RangeTombstone& t : tombstones_) tombstones += HeapBytes(t.start) + HeapBytes(t.end);
  // The fragments hold about as much again.
  return n + (fragmented_ != nullptr ? 2 * tombstones : tombstones);
}

Status TableReader::ReadVerified(const BlockHandle& handle, char* dst) const {
  size_t n = handle.size + kBlockTrailerSize;
  std::string_view got;
  Status s = file_->Read(handle.offset, n, &got, dst);
  if (!s.ok()) return s;
  if (got.size() != n) return Status::Corruption(fname_, "truncated block");
  if (got.data() != dst) std::memcpy(dst, got.data(), n);
  if (options_.counters) options_.counters->bytes_read.Add(n);
  uint32_t stored = crc32c::Unmask(DecodeFixed32(dst + handle.size));
  if (options_.verify_checksums && stored != crc32c::Value(dst, handle.size)) {
    // Say whether the bytes are all zero: a punched hole read as a page is
    // an engine bug (a dropped page still read), not damage on disk.
    const bool zero = std::all_of(dst, dst + n, [](char c) { return c == 0; });
    return Status::Corruption(fname_, "block checksum mismatch at offset " + std::to_string(handle.offset) +
                                          " (" + std::to_string(handle.size) + " bytes" +
                                          (zero ? ", all zero: a punched hole?)" : ")"));
  }
  return Status::OK();
}

Status TableReader::ReadBlock(const BlockHandle& handle, std::string* contents) const {
  contents->resize(handle.size + kBlockTrailerSize);
  Status s = ReadVerified(handle, contents->data());
  contents->resize(handle.size);
  return s;
}

Status TableReader::ReadPage(const PageMeta& meta, bool fill_cache, PageRef* page) const {
  CacheKey key{options_.cache_namespace | file_number_, meta.offset};
  if (options_.page_cache != nullptr) {
    if ((*page = options_.page_cache->Lookup(key)) != nullptr) return Status::OK();
  }
  auto p = std::make_shared<Page>();
  Status s = ReadPageContents(meta, p.get());
  if (!s.ok()) return s;
  if (options_.page_cache != nullptr && fill_cache) {
    options_.page_cache->Insert(key, p, p->buf.capacity() + sizeof(Page) + 64);
  }
  *page = std::move(p);
  return Status::OK();
}

Status TableReader::ReadPageContents(const PageMeta& meta, Page* page) const {
  const auto type = static_cast<Compression>(meta.compression);
  if (type == Compression::kNone) {
    page->buf = RecycledBuffer(meta.size + kBlockTrailerSize);
    page->size = meta.size;
    return ReadVerified(BlockHandle{meta.offset, meta.size}, page->buf.data());
  }
  // The stored bytes only live until decoded: one buffer per thread, not an
  // allocation per page read.
  thread_local std::vector<char> stored;
  stored.resize(meta.size + kBlockTrailerSize);
  Status s = ReadVerified(BlockHandle{meta.offset, meta.size}, stored.data());
  if (!s.ok()) return s;
  page->buf = RecycledBuffer(meta.raw_size);
  page->size = meta.raw_size;
  s = UncompressPage(type, std::string_view(stored.data(), meta.size), page->buf.data(), meta.raw_size);
  if (!s.ok()) return Status::Corruption(fname_, s.message() + " at offset " + std::to_string(meta.offset));
  return Status::OK();
}

std::string_view TableReader::PageFilter(const PageMeta& meta) const {
  if (meta.filter_size == 0) return {};
  return std::string_view(filters_).substr(meta.filter_offset, meta.filter_size);
}

bool TableReader::SinglePageFilterMayContain(size_t t, std::string_view key, const PageOverrides* o,
                                             bool* checked) const {
  const std::span<const PageMeta> pages = TilePages(t);
  // A dropped or patched page has its filter elsewhere, or none.
  const bool plain = o == nullptr || ((o->dropped == nullptr || o->dropped->empty()) &&
                                      (o->patched == nullptr || o->patched->empty()));
  *checked = pages.size() == 1 && pages[0].filter_size != 0 && plain;
  if (!*checked) return true;
  if (BloomMayContain(PageFilter(pages[0]), key)) return true;
  if (options_.counters) options_.counters->bloom_useful.Add(1);
  return false;
}

size_t TableReader::FindTile(std::string_view sort_key) const {
  return fences_.LowerBound(sort_key);
}

bool TableReader::MayContain(std::string_view sort_key, const PageOverrides* overrides) const {
  size_t t = FindTile(sort_key);
  if (t == tile_count() || fences_.BeforeTile(t, sort_key)) return false;
  bool checked;
  if (!SinglePageFilterMayContain(t, sort_key, overrides, &checked)) return false;
  if (checked) return true;  // the tile's only page may hold it
  for (const PageMeta& m : TilePages(t)) {
    bool present;
    const TableReader* reader;
    const PageMeta* page;
    if (!EffectivePage(m, overrides, &present, &reader, &page).ok()) return true;
    if (!present) continue;
    std::string_view filter = reader->PageFilter(*page);
    if (filter.empty() || BloomMayContain(filter, sort_key)) return true;
  }
  return false;
}

size_t TableReader::LocateTile(GetContext* ctx) const {
  if (fragmented_ != nullptr) {
    ctx->AddCoveringTombstone(fragmented_->MaxCoveringSeq(ctx->key(), ctx->read_seq()));
  }
  const size_t t = FindTile(ctx->key());
  return t == tile_count() || fences_.BeforeTile(t, ctx->key()) ? tile_count() : t;
}

void TableReader::PrefetchFilter(size_t t) const {
  const std::span<const PageMeta> pages = TilePages(t);
  if (pages.empty() || pages[0].filter_size == 0) return;
  const PageMeta& first = pages[0];
  const char* filter = filters_.data() + first.filter_offset;
  __builtin_prefetch(filter);
  __builtin_prefetch(filter + first.filter_size - 1);
}

Status TableReader::Get(GetContext* ctx, bool fill_cache, const PageOverrides* overrides) const {
  const size_t t = LocateTile(ctx);
  if (t == tile_count()) return Status::OK();
  bool filter_checked;
  if (!SinglePageFilterMayContain(t, ctx->key(), overrides, &filter_checked)) return Status::OK();
  return GetFromTile(ctx, t, filter_checked, fill_cache, overrides);
}

void TableReader::MultiGet(std::span<GetContext* const> ctxs, bool fill_cache, const PageOverrides* overrides) const {
  // In waves: every key of a wave finds its tile and fetches its filter
  // before the first filter is tested, so that their cache misses overlap.
  constexpr size_t kWave = 16;
  std::array<size_t, kWave> tiles;
  for (size_t base = 0; base < ctxs.size(); base += kWave) {
    const std::span<GetContext* const> wave = ctxs.subspan(base, std::min(kWave, ctxs.size() - base));
    // Three passes, each fetching what the next reads: the tiles' page
    // metadata, then their filters.
    for (size_t i = 0; i < wave.size(); i++) {
      tiles[i] = LocateTile(wave[i]);
      if (tiles[i] != tile_count()) __builtin_prefetch(TilePages(tiles[i]).data());
    }
    for (size_t i = 0; i < wave.size(); i++) {
      if (tiles[i] != tile_count()) PrefetchFilter(tiles[i]);
    }
    for (size_t i = 0; i < wave.size(); i++) {
      bool filter_checked;
      if (tiles[i] == tile_count() || !SinglePageFilterMayContain(tiles[i], wave[i]->key(), overrides, &filter_checked)) {
        continue;
      }
      Status s = GetFromTile(wave[i], tiles[i], filter_checked, fill_cache, overrides);
      if (!s.ok()) wave[i]->Fail(std::move(s));
    }
  }
}

Status TableReader::GetFromTile(GetContext* ctx, size_t t, bool filter_checked, bool fill_cache,
                                const PageOverrides* overrides) const {
  struct Found {
    SequenceNumber seq;
    EntryKind kind;
    std::string_view value;
    uint64_t delete_key;
    size_t page;  // in `pages`, which keeps `value` alive
  };
  // A lookup reads one page or a few: their bookkeeping lives on the stack.
  std::array<std::byte, 512> stack;
  std::pmr::monotonic_buffer_resource arena(stack.data(), stack.size());
  std::pmr::vector<Found> found(&arena);
  std::pmr::vector<std::shared_ptr<const void>> pages(&arena);
  // Made once a page is read (most misses stop at the filters); one buffer
  // per thread, not an allocation per lookup.
  thread_local std::string lookup;
  lookup.clear();
  for (const PageMeta& m : TilePages(t)) {
    bool present;
    const TableReader* reader;
    const PageMeta* meta;
    Status s = EffectivePage(m, overrides, &present, &reader, &meta);
    if (!s.ok()) return s;
    if (!present) continue;
    std::string_view filter = filter_checked ? std::string_view() : reader->PageFilter(*meta);
    if (!filter.empty() && !BloomMayContain(filter, ctx->key())) {
      if (options_.counters) options_.counters->bloom_useful.Add(1);
      continue;
    }
    PageRef page;
    s = reader->ReadPage(*meta, fill_cache, &page);
    if (!s.ok()) return s;
    if (lookup.empty()) AppendInternalKey(&lookup, ctx->key(), ctx->read_seq(), kSeekKind);
    PageIterator it(page);
    for (it.Seek(lookup); it.Valid() && ExtractSortKey(it.key()) == ctx->key(); it.Next()) {
      uint64_t tag = ExtractTag(it.key());
      found.push_back(Found{TagSequence(tag), TagKind(tag), it.value(), it.delete_key(), pages.size()});
      if (TagKind(tag) != EntryKind::kMerge) break;  // older versions in this page are hidden
    }
    if (!it.status().ok()) return Status::Corruption(fname_, it.status().message());
    pages.push_back(std::move(page));
  }
  if (found.size() > 1) {
    std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.seq > b.seq; });
  }
  for (const Found& f : found) {
    if (ctx->SaveEntry(f.seq, f.kind, f.value, f.delete_key, pages[f.page])) break;
  }
  return Status::OK();
}

// Iterates a table tile by tile; inside a tile, merges the tile's pages.
// The current entry is cached after every move, so key() and value() do not
// descend into the tile iterator again.
class TableIterator final : public InternalIterator {
 public:
  TableIterator(const TableReader* table, bool fill_cache, const PageOverrides* overrides)
      : table_(table), fill_cache_(fill_cache), overrides_(overrides) {}

  bool Valid() const override { return valid_; }
  void SeekToFirst() override {
    LoadTile(0);
    if (tile_iter_) tile_iter_->SeekToFirst();
    SkipEmptyTiles();
  }
  void Seek(std::string_view target) override {
    LoadTile(table_->FindTile(ExtractSortKey(target)));
    if (tile_iter_) tile_iter_->Seek(target);
    SkipEmptyTiles();
  }
  void Next() override {
    if (page_ != nullptr) {
      // One page per tile (h = 1): a direct, non-virtual call.
      page_->Next();
      if (page_->Valid()) {
        key_ = page_->key();
        value_ = page_->value();
        delete_key_ = page_->delete_key();
        return;
      }
    } else {
      tile_iter_->Next();
    }
    SkipEmptyTiles();
  }
  std::string_view key() const override { return key_; }
  std::string_view value() const override { return value_; }
  uint64_t delete_key() const override { return delete_key_; }
  Status status() const override {
    if (!status_.ok()) return status_;
    return tile_iter_ ? tile_iter_->status() : Status::OK();
  }

 private:
  void LoadTile(size_t index) {
    tile_iter_.reset();
    page_ = nullptr;
    tile_ = index;
    if (index >= table_->tile_count() || !status_.ok()) return;
    const std::span<const PageMeta> metas = table_->TilePages(index);
    std::vector<std::unique_ptr<InternalIterator>> pages;
    pages.reserve(metas.size());
    for (const PageMeta& m : metas) {
      bool present;
      const TableReader* reader;
      const PageMeta* meta;
      Status s = table_->EffectivePage(m, overrides_, &present, &reader, &meta);
      if (!s.ok()) {
        status_ = s;
        return;
      }
      if (!present) continue;
      PageRef page;
      s = reader->ReadPage(*meta, fill_cache_, &page);
      if (!s.ok()) {
        status_ = s;
        return;
      }
      pages.push_back(std::make_unique<PageIterator>(std::move(page)));
    }
    if (pages.empty()) {
      tile_iter_ = std::make_unique<EmptyIterator>(Status::OK());
    } else if (pages.size() == 1) {
      page_ = static_cast<PageIterator*>(pages[0].get());
      tile_iter_ = std::move(pages[0]);
    } else {
      tile_iter_ = NewMergingIterator(std::move(pages));
    }
  }
  void SkipEmptyTiles() {
    while (tile_iter_ != nullptr && !tile_iter_->Valid()) {
      if (!tile_iter_->status().ok()) {
        status_ = Status::Corruption(table_->fname_, tile_iter_->status().message());
        tile_iter_.reset();
        break;
      }
      LoadTile(tile_ + 1);
      if (tile_iter_) tile_iter_->SeekToFirst();
    }
    valid_ = tile_iter_ != nullptr;
    if (valid_) {
      key_ = tile_iter_->key();
      value_ = tile_iter_->value();
      delete_key_ = tile_iter_->delete_key();
    }
  }

  const TableReader* table_;
  bool fill_cache_;
  const PageOverrides* overrides_;  // pinned by the caller
  size_t tile_ = 0;
  std::unique_ptr<InternalIterator> tile_iter_;
  PageIterator* page_ = nullptr;  // tile_iter_ when the tile has one page
  bool valid_ = false;
  std::string_view key_, value_;
  uint64_t delete_key_ = 0;
  Status status_;
};

std::unique_ptr<InternalIterator> TableReader::NewIterator(bool fill_cache, const PageOverrides* overrides) const {
  return std::make_unique<TableIterator>(this, fill_cache, overrides);
}

}  // namespace lethe
