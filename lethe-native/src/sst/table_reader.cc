#include "sst/table_reader.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <optional>
#include <vector>

#include "iterator/merging_iterator.h"
#include "sst/bloom.h"
#include "sst/compression.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace lethe {
namespace {

// Whether every byte is zero: how a punched hole reads.
bool AllZero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

// Cache keys: a page's is its offset, an index partition's its offset with
// the top bit set (no offset reaches it).
constexpr uint64_t kPartitionKeyBit = uint64_t{1} << 63;

}  // namespace

Status TableReader::EffectivePage(const IndexPartition& part, const PageMeta& own, const PageOverrides* o,
                                  bool* present, PageSource* source) const {
  *present = true;
  *source = PageSource{this, &part, &own};
  if (o == nullptr) return Status::OK();
  if (o->dropped != nullptr && !o->dropped->empty() &&
      std::binary_search(o->dropped->begin(), o->dropped->end(), own.index)) {
    *present = false;
    return Status::OK();
  }
  if (o->patched == nullptr || o->patched->empty()) return Status::OK();
  auto it = std::lower_bound(o->patched->begin(), o->patched->end(), own.index);
  if (it == o->patched->end() || *it != own.index) return Status::OK();
  const size_t slot = static_cast<size_t>(it - o->patched->begin());
  const TableReader* patch = o->patch;
  if (patch == nullptr || slot >= patch->tile_count()) {
    return Status::Corruption(fname_, "patched page " + std::to_string(own.index) + " missing from its patch table");
  }
  // Patch tables are one partition, which their readers keep.
  if (patch->whole_ == nullptr) return Status::Corruption(patch->fname_, "patch table's index not in memory");
  const IndexPartition& patch_part = *patch->whole_;
  const std::span<const PageMeta> pages = patch_part.TilePages(slot);
  if (pages.size() != 1) {
    return Status::Corruption(fname_, "patched page " + std::to_string(own.index) + " missing from its patch table");
  }
  *source = PageSource{patch, &patch_part, &pages[0]};
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
  r->format_version_ = footer.version;
  // Bounds checks are written so that no sum can wrap: handles and page
  // metadata come from the file and may hold any 64-bit value. The
  // partition region's size includes its blocks' trailers.
  const bool partitioned = footer.version >= kFirstPartitionedFormatVersion;
  for (const BlockHandle* h : {&footer.filter, &footer.range_tombstones, &footer.index, &footer.properties}) {
    const uint64_t trailer = partitioned && h == &footer.filter ? 0 : kBlockTrailerSize;
    if (!FitsIn(h->offset, h->size, file_size - kFooterSize, trailer)) {
      return Status::Corruption(r->fname_, "block handle outside the file");
    }
  }
  r->data_limit_ = footer.filter.offset;
  if (!(s = r->LoadIndex(footer)).ok()) return s;
  std::string block;
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

Status TableReader::LoadIndex(const Footer& footer) {
  return footer.version >= kFirstPartitionedFormatVersion ? LoadTopLevelIndex(footer) : LoadWholeIndex(footer);
}

Status TableReader::LoadWholeIndex(const Footer& footer) {
  std::string index, filters;
  Status s = ReadBlock(footer.index, &index);
  if (s.ok()) s = ReadBlock(footer.filter, &filters);
  if (!s.ok()) return s;
  IndexPartition::Builder builder(footer.version, 0, data_limit_);
  if (!(s = builder.Add(index, filters)).ok()) return Status::Corruption(fname_, s.message());
  AdoptWholeIndex(builder.Finish());
  return Status::OK();
}

Status TableReader::LoadTopLevelIndex(const Footer& footer) {
  std::string block;
  Status s = ReadBlock(footer.index, &block);
  if (!s.ok()) return s;
  std::vector<PartitionMeta> partitions;
  if (!(s = DecodeTopLevelIndex(block, &partitions)).ok()) return Status::Corruption(fname_, s.message());
  const uint64_t region_end = footer.filter.offset + footer.filter.size;
  part_handles_.reserve(partitions.size());
  for (const PartitionMeta& p : partitions) {
    if (p.handle.offset < footer.filter.offset || !FitsIn(p.handle.offset, p.handle.size, region_end, kBlockTrailerSize)) {
      return Status::Corruption(fname_, "index partition outside the partition region");
    }
    if (p.tiles > UINT32_MAX - part_first_tile_.back() || p.pages > UINT32_MAX - part_first_page_.back() ||
        !part_keys_.Add(p.smallest, p.largest)) {
      return Status::Corruption(fname_, "too many pages");
    }
    part_first_tile_.push_back(part_first_tile_.back() + p.tiles);
    part_first_page_.push_back(part_first_page_.back() + p.pages);
    part_handles_.push_back(p.handle);
  }
  part_keys_.Shrink();
  part_fences_.Build(&part_keys_);
  const bool keep = options_.pin_index || options_.page_cache == nullptr || partitions.size() == 1;
  return keep ? KeepWholeIndex() : Status::OK();
}

Status TableReader::AddPartition(size_t p, IndexPartition::Builder* builder) const {
  if (options_.counters) options_.counters->partition_reads.Add(1);
  std::string block;
  Status s = ReadBlock(part_handles_[p], &block);
  if (!s.ok()) return s;
  std::string_view index, filters;
  const size_t tiles = builder->tiles(), pages = builder->pages();
  if (!(s = SplitPartition(block, &index, &filters)).ok() || !(s = builder->Add(index, filters)).ok()) {
    return Status::Corruption(fname_, s.message());
  }
  if (builder->tiles() - tiles != part_first_tile_[p + 1] - part_first_tile_[p] ||
      builder->pages() - pages != part_first_page_[p + 1] - part_first_page_[p] ||
      builder->smallest(tiles) != part_keys_.smallest(p) || builder->largest(builder->tiles() - 1) != part_keys_.largest(p)) {
    return Status::Corruption(fname_, "index partition " + std::to_string(p) + " differs from the top-level index");
  }
  return Status::OK();
}

Status TableReader::ReadPartitionBlock(size_t p, std::unique_ptr<IndexPartition>* out) const {
  IndexPartition::Builder builder(format_version_, part_first_page_[p], data_limit_);
  Status s = AddPartition(p, &builder);
  if (!s.ok()) return s;
  *out = builder.Finish();
  return Status::OK();
}

Status TableReader::KeepWholeIndex() {
  if (whole_ != nullptr) return Status::OK();
  IndexPartition::Builder builder(format_version_, 0, data_limit_);
  for (size_t p = 0; p < partition_count(); p++) {
    Status s = AddPartition(p, &builder);
    if (!s.ok()) return s;
  }
  AdoptWholeIndex(builder.Finish());
  memory_usage_ = ComputeMemoryUsage();
  return Status::OK();
}

void TableReader::AdoptWholeIndex(std::unique_ptr<IndexPartition> whole) {
  // One partition in memory from now on (none for a table without tiles).
  part_keys_ = TileKeys();
  part_first_tile_ = {0};
  part_first_page_ = {0};
  if (whole->tile_count() > 0) {
    part_keys_.Add(whole->tile(0).smallest, whole->tile(whole->tile_count() - 1).largest);
    part_first_tile_.push_back(static_cast<uint32_t>(whole->tile_count()));
    part_first_page_.push_back(static_cast<uint32_t>(whole->pages().size()));
  }
  part_fences_.Build(&part_keys_);
  part_handles_.clear();
  whole_ = std::move(whole);
}

size_t TableReader::PartitionBytes() const {
  size_t n = 0;
  for (const BlockHandle& h : part_handles_) n += h.size;
  return n;
}

Status TableReader::GetPartition(size_t p, bool fill_cache, PartitionRef* holder, const IndexPartition** part) const {
  if (whole_ != nullptr) {
    *part = whole_.get();
    return Status::OK();
  }
  const CacheKey key{options_.cache_namespace | file_number_, part_handles_[p].offset | kPartitionKeyBit};
  if (std::shared_ptr<const void> hit = options_.page_cache->Lookup(key)) {
    *holder = std::static_pointer_cast<const IndexPartition>(std::move(hit));
  } else {
    std::unique_ptr<IndexPartition> read;
    Status s = ReadPartitionBlock(p, &read);
    if (!s.ok()) return s;
    *holder = std::move(read);
    if (fill_cache) options_.page_cache->Insert(key, *holder, (*holder)->MemoryUsage() + 64);
  }
  *part = holder->get();
  return Status::OK();
}

Status TableReader::ReadPartition(size_t p, bool fill_cache, PartitionRef* out) const {
  if (whole_ != nullptr) {
    *out = whole_;
    return Status::OK();
  }
  const IndexPartition* part;
  return GetPartition(p, fill_cache, out, &part);
}

Status TableReader::ReadPartitions(std::vector<PartitionRef>* out) const {
  out->resize(partition_count());
  for (size_t p = 0; p < partition_count(); p++) {
    Status s = ReadPartition(p, /*fill_cache=*/false, &(*out)[p]);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

// A string's heap block, if it has one (beyond the short-string buffer).
static size_t HeapBytes(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

size_t TableReader::ComputeMemoryUsage() const {
  size_t n = sizeof(*this) + HeapBytes(fname_) + part_keys_.MemoryUsage() + part_fences_.MemoryUsage();
  n += (part_first_tile_.capacity() + part_first_page_.capacity()) * sizeof(uint32_t) +
       part_handles_.capacity() * sizeof(BlockHandle);
  if (whole_ != nullptr) n += whole_->MemoryUsage();
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
    const bool zero = AllZero(std::string_view(dst, n));
    return Status::Corruption(fname_, "block checksum mismatch at offset " + std::to_string(handle.offset) +
                                          " (" + std::to_string(handle.size) + " bytes" +
                                          (zero ? ", all zero: a punched hole?)" : ")"));
  }
  return Status::OK();
}

bool TableReader::PageIsHole(const PageMeta& meta) const {
  std::string buf(meta.size + kBlockTrailerSize, '\1');
  std::string_view got;
  if (!file_->Read(meta.offset, buf.size(), &got, buf.data()).ok() || got.size() != buf.size()) return false;
  return AllZero(got);
}

Status TableReader::ReadBlock(const BlockHandle& handle, std::string* contents) const {
  contents->resize(handle.size + kBlockTrailerSize);
  Status s = ReadVerified(handle, contents->data());
  contents->resize(handle.size);
  return s;
}

Status TableReader::ReadPage(const PageMeta& meta, bool fill_cache, PageRef* page) const {
  return LookupPage(meta, page) ? Status::OK() : LoadPage(meta, fill_cache, page);
}

bool TableReader::LookupPage(const PageMeta& meta, PageRef* page) const {
  if (options_.page_cache == nullptr) return false;
  std::shared_ptr<const void> hit = options_.page_cache->Lookup(PageCacheKey(meta));
  if (hit == nullptr) return false;
  *page = std::static_pointer_cast<const Page>(std::move(hit));
  return true;
}

void TableReader::PrefetchPageLookup(const PageMeta& meta) const {
  if (options_.page_cache != nullptr) options_.page_cache->Prefetch(PageCacheKey(meta));
}

Status TableReader::LoadPage(const PageMeta& meta, bool fill_cache, PageRef* page) const {
  auto p = std::make_shared<Page>();
  Status s = ReadPageContents(meta, p.get());
  if (!s.ok()) return s;
  if (options_.page_cache != nullptr && fill_cache) {
    options_.page_cache->Insert(PageCacheKey(meta), p, p->buf.capacity() + sizeof(Page) + 64);
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

bool TableReader::SinglePageFilterMayContain(const TileSpot& spot, std::string_view key, const PageOverrides* o,
                                             bool* checked) const {
  const std::span<const PageMeta> pages = spot.part->TilePages(spot.tile);
  // A dropped or patched page has its filter elsewhere, or none.
  const bool plain = o == nullptr || ((o->dropped == nullptr || o->dropped->empty()) &&
                                      (o->patched == nullptr || o->patched->empty()));
  *checked = pages.size() == 1 && pages[0].filter_size != 0 && plain;
  if (!*checked) return true;
  if (BloomMayContain(spot.part->Filter(pages[0]), key)) return true;
  if (options_.counters) options_.counters->bloom_useful.Add(1);
  return false;
}

size_t TableReader::FindPartition(std::string_view key) const {
  const size_t p = part_fences_.LowerBound(key);
  return p == partition_count() || part_fences_.BeforeTile(p, key) ? partition_count() : p;
}

bool TableReader::MayContain(std::string_view sort_key, const PageOverrides* overrides) const {
  PartitionRef holder;
  TileSpot spot;
  // A partition that cannot be read may hold the key.
  if (!FindSpot(sort_key, /*fill_cache=*/true, nullptr, &holder, &spot).ok()) return true;
  if (!spot.found()) return false;
  bool checked;
  if (!SinglePageFilterMayContain(spot, sort_key, overrides, &checked)) return false;
  if (checked) return true;  // the tile's only page may hold it
  for (const PageMeta& m : spot.part->TilePages(spot.tile)) {
    bool present;
    PageSource src;
    if (!EffectivePage(*spot.part, m, overrides, &present, &src).ok()) return true;
    if (!present) continue;
    std::string_view filter = src.partition->Filter(*src.meta);
    if (filter.empty() || BloomMayContain(filter, sort_key)) return true;
  }
  return false;
}

Status TableReader::LocateTile(GetContext* ctx, bool fill_cache, const TileSpot* hint, PartitionRef* holder,
                               TileSpot* spot) const {
  if (fragmented_ != nullptr) {
    ctx->AddCoveringTombstone(fragmented_->MaxCoveringSeq(ctx->key(), ctx->read_seq()));
  }
  return FindSpot(ctx->key(), fill_cache, hint, holder, spot);
}

Status TableReader::FindSpot(std::string_view key, bool fill_cache, const TileSpot* hint, PartitionRef* holder,
                             TileSpot* spot) const {
  *spot = TileSpot();
  // A whole index in memory: its tile search alone answers.
  const size_t p = whole_ != nullptr ? 0 : FindPartition(key);
  if (p == partition_count()) return Status::OK();
  const IndexPartition* part;
  if (whole_ != nullptr) {
    part = whole_.get();
  } else if (hint != nullptr && hint->part != nullptr && hint->partition == p) {
    part = hint->part;
  } else {
    Status s = GetPartition(p, fill_cache, holder, &part);
    if (!s.ok()) return s;
  }
  const size_t t = part->FindTile(key);
  if (t == part->tile_count() || part->BeforeTile(t, key)) return Status::OK();
  *spot = TileSpot{p, part, t};
  return Status::OK();
}

void TableReader::PrefetchFilter(const TileSpot& spot) {
  const std::span<const PageMeta> pages = spot.part->TilePages(spot.tile);
  if (pages.empty() || pages[0].filter_size == 0) return;
  const std::string_view filter = spot.part->Filter(pages[0]);
  __builtin_prefetch(filter.data());
  __builtin_prefetch(filter.data() + filter.size() - 1);
}

Status TableReader::Get(GetContext* ctx, bool fill_cache, const PageOverrides* overrides) const {
  PartitionRef holder;
  TileSpot spot;
  Status s = LocateTile(ctx, fill_cache, nullptr, &holder, &spot);
  if (!s.ok() || !spot.found()) return s;
  bool filter_checked;
  if (!SinglePageFilterMayContain(spot, ctx->key(), overrides, &filter_checked)) return Status::OK();
  return GetFromTile(ctx, spot, filter_checked, fill_cache, overrides);
}

template <typename Visit>
Status TableReader::VisitPageEntries(PageIterator* it, std::string_view key, Visit&& visit) const {
  for (; it->Valid() && ExtractSortKey(it->key()) == key; it->Next()) {
    const uint64_t tag = ExtractTag(it->key());
    if (visit(TagSequence(tag), TagKind(tag), it->value(), it->delete_key())) break;
    if (TagKind(tag) != EntryKind::kMerge) break;  // older versions in this page are hidden
  }
  if (!it->status().ok()) return Status::Corruption(fname_, it->status().message());
  return Status::OK();
}

void TableReader::MultiGet(std::span<GetContext* const> ctxs, bool fill_cache, const PageOverrides* overrides) const {
  std::vector<TableProbe> probes;
  probes.reserve(ctxs.size());
  for (GetContext* ctx : ctxs) probes.push_back(TableProbe{this, overrides, ctx});
  MultiGet(probes, fill_cache);
}

// A wave of probes, taken through the steps of a lookup together. The
// probes of a table ascend, so neighbours mostly share a partition: a probe
// reuses the partition found last (`last`, kept alive by `carried` unless
// the reader keeps it) when its table is the same, and each probe holds its
// partition until the wave is done.
struct TableReader::Wave {
  static constexpr size_t kSize = 16;
  std::span<const TableProbe> probes;
  std::array<TileSpot, kSize> spots;  // not found(): nothing more to do
  std::array<PartitionRef, kSize> holders;
  // The probe's tile is one page of its own whose filter said yes: the page
  // is read and searched in the wave's steps, not by GetFromTile.
  std::array<bool, kSize> stepped;
  std::array<PageRef, kSize> pages;
  std::array<std::optional<PageIterator>, kSize> iters;  // searching pages[i]
  std::array<std::string, kSize> lookups;                // the probes' seek keys
  const TableReader* last_table = nullptr;
  TileSpot last;
  PartitionRef carried;
};

void TableReader::MultiGet(std::span<const TableProbe> probes, bool fill_cache) {
  Wave w;
  for (size_t base = 0; base < probes.size(); base += Wave::kSize) {
    w.probes = probes.subspan(base, std::min(Wave::kSize, probes.size() - base));
    LocateWave(&w, fill_cache);
    ReadWavePages(&w, fill_cache);
    SearchWavePages(&w);
  }
}

// Finds every probe's tile, then fetches the filters, then tests them: each
// pass fetches what the next reads. A tile of several pages, or one under
// overrides, is read at once (GetFromTile).
void TableReader::LocateWave(Wave* w, bool fill_cache) {
  for (size_t i = 0; i < w->probes.size(); i++) {
    const TableProbe& p = w->probes[i];
    w->stepped[i] = false;
    const bool same_table = p.table == w->last_table;
    TileSpot& spot = w->spots[i];
    Status s = p.table->LocateTile(p.ctx, fill_cache, same_table ? &w->last : nullptr, &w->holders[i], &spot);
    if (!s.ok()) {
      p.ctx->Fail(std::move(s));
      spot = TileSpot();
      continue;
    }
    if (!spot.found()) continue;
    if (!same_table || spot.partition != w->last.partition) {
      w->last_table = p.table;
      w->last = spot;
      w->carried = w->holders[i];
    } else {
      w->holders[i] = w->carried;  // found through `last`: this wave must keep it too
    }
    __builtin_prefetch(spot.part->TilePages(spot.tile).data());
  }
  for (size_t i = 0; i < w->probes.size(); i++) {
    if (w->spots[i].found()) PrefetchFilter(w->spots[i]);
  }
  for (size_t i = 0; i < w->probes.size(); i++) {
    const TableProbe& p = w->probes[i];
    TileSpot& spot = w->spots[i];
    bool filter_checked;
    if (!spot.found() || !p.table->SinglePageFilterMayContain(spot, p.ctx->key(), p.overrides, &filter_checked)) {
      continue;
    }
    if (filter_checked && p.table->options_.page_cache != nullptr) {
      w->stepped[i] = true;
      continue;
    }
    Status s = p.table->GetFromTile(p.ctx, spot, filter_checked, fill_cache, p.overrides);
    if (!s.ok()) p.ctx->Fail(std::move(s));
  }
}

// The stepped probes' pages: every page cache lookup started, then those in
// the page cache, each starting to fetch its page's trailer (the restart
// points), then the others from their files.
void TableReader::ReadWavePages(Wave* w, bool fill_cache) {
  for (size_t i = 0; i < w->probes.size(); i++) {
    if (w->stepped[i]) w->probes[i].table->PrefetchPageLookup(w->spots[i].part->TilePages(w->spots[i].tile)[0]);
  }
  for (size_t i = 0; i < w->probes.size(); i++) {
    if (!w->stepped[i]) continue;
    const TileSpot& spot = w->spots[i];
    if (w->probes[i].table->LookupPage(spot.part->TilePages(spot.tile)[0], &w->pages[i])) {
      const Page& page = *w->pages[i];
      if (page.size > 0) __builtin_prefetch(page.buf.data() + page.size - 1);
    }
  }
  for (size_t i = 0; i < w->probes.size(); i++) {
    if (!w->stepped[i] || w->pages[i] != nullptr) continue;
    const TileSpot& spot = w->spots[i];
    Status s = w->probes[i].table->LoadPage(spot.part->TilePages(spot.tile)[0], fill_cache, &w->pages[i]);
    if (!s.ok()) {
      w->probes[i].ctx->Fail(std::move(s));
      w->stepped[i] = false;
    }
  }
}

// Fetches the pages' restart points; then finds in each page the run of
// entries between two restart points that may hold the key, and fetches
// it; then searches each run.
void TableReader::SearchWavePages(Wave* w) {
  for (size_t i = 0; i < w->probes.size(); i++) {
    if (w->stepped[i]) PrefetchRestarts(*w->pages[i]);
  }
  for (size_t i = 0; i < w->probes.size(); i++) {
    if (!w->stepped[i]) continue;
    const GetContext* ctx = w->probes[i].ctx;
    w->lookups[i].clear();
    AppendInternalKey(&w->lookups[i], ctx->key(), ctx->read_seq(), kSeekKind);
    PageIterator& it = w->iters[i].emplace(w->pages[i]);
    it.SeekBlock(w->lookups[i]);
    it.PrefetchBlock();
  }
  for (size_t i = 0; i < w->probes.size(); i++) {
    if (!w->stepped[i]) continue;
    const TableProbe& p = w->probes[i];
    GetContext* ctx = p.ctx;
    const PageRef& page = w->pages[i];
    PageIterator& it = *w->iters[i];
    it.SeekInBlock(w->lookups[i]);
    Status s = p.table->VisitPageEntries(&it, ctx->key(),
                                         [&](SequenceNumber seq, EntryKind kind, std::string_view value, uint64_t dk) {
                                           return ctx->SaveEntry(seq, kind, value, dk, page);
                                         });
    if (!s.ok()) ctx->Fail(std::move(s));
  }
  // Lets go of the wave's pages and partitions (a context pins what it keeps).
  for (size_t i = 0; i < w->probes.size(); i++) {
    w->iters[i].reset();
    w->pages[i].reset();
    w->holders[i].reset();
  }
}

Status TableReader::GetFromTile(GetContext* ctx, const TileSpot& spot, bool filter_checked, bool fill_cache,
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
  for (const PageMeta& m : spot.part->TilePages(spot.tile)) {
    bool present;
    PageSource src;
    Status s = EffectivePage(*spot.part, m, overrides, &present, &src);
    if (!s.ok()) return s;
    if (!present) continue;
    std::string_view filter = filter_checked ? std::string_view() : src.partition->Filter(*src.meta);
    if (!filter.empty() && !BloomMayContain(filter, ctx->key())) {
      if (options_.counters) options_.counters->bloom_useful.Add(1);
      continue;
    }
    PageRef page;
    s = src.reader->ReadPage(*src.meta, fill_cache, &page);
    if (!s.ok()) return s;
    if (lookup.empty()) AppendInternalKey(&lookup, ctx->key(), ctx->read_seq(), kSeekKind);
    PageIterator it(page);
    it.Seek(lookup);
    s = VisitPageEntries(&it, ctx->key(), [&](SequenceNumber seq, EntryKind kind, std::string_view value, uint64_t dk) {
      found.push_back(Found{seq, kind, value, dk, pages.size()});
      return false;
    });
    if (!s.ok()) return s;
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
    LoadTile(0, 0);
    if (tile_iter_) tile_iter_->SeekToFirst();
    SkipEmptyTiles();
  }
  void SeekToLast() override {
    LoadTileBefore(table_->partition_count(), 0);
    SkipEmptyTiles(/*backward=*/true);
  }
  // A seek within the open tile keeps its pages (see LevelIterator::Seek).
  void Seek(std::string_view target) override {
    const std::string_view key = ExtractSortKey(target);
    const size_t p = table_->part_fences_.LowerBound(key);
    if (tile_iter_ != nullptr && part_ != nullptr && p == partition_ && part_->FindTile(key) == tile_) {
      tile_iter_->Seek(target);
    } else if (LoadPartition(p)) {
      LoadTile(p, part_->FindTile(key));
      if (tile_iter_) tile_iter_->Seek(target);
    }
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
  void Prev() override {
    tile_iter_->Prev();
    SkipEmptyTiles(/*backward=*/true);
  }
  std::string_view key() const override { return key_; }
  std::string_view value() const override { return value_; }
  uint64_t delete_key() const override { return delete_key_; }
  Status status() const override {
    if (!status_.ok()) return status_;
    return tile_iter_ ? tile_iter_->status() : Status::OK();
  }

 private:
  // Makes partition p current; false at the end of the table or on an error.
  bool LoadPartition(size_t p) {
    tile_iter_.reset();
    page_ = nullptr;
    if (p >= table_->partition_count() || !status_.ok()) return false;
    if (part_ == nullptr || p != partition_) {
      part_holder_.reset();
      part_ = nullptr;
      Status s = table_->GetPartition(p, fill_cache_, &part_holder_, &part_);
      if (!s.ok()) {
        status_ = s;
        return false;
      }
      partition_ = p;
    }
    return true;
  }
  // Opens tile t of partition p (the next partition's first when t is past p's last).
  void LoadTile(size_t p, size_t t) {
    if (!LoadPartition(p)) return;
    if (t >= part_->tile_count()) {
      if (LoadPartition(p + 1)) LoadTile(p + 1, 0);
      return;
    }
    tile_ = t;
    const std::span<const PageMeta> metas = part_->TilePages(t);
    std::vector<std::unique_ptr<InternalIterator>> pages;
    pages.reserve(metas.size());
    for (const PageMeta& m : metas) {
      bool present;
      PageSource src;
      Status s = table_->EffectivePage(*part_, m, overrides_, &present, &src);
      if (!s.ok()) {
        status_ = s;
        return;
      }
      if (!present) continue;
      PageRef page;
      s = src.reader->ReadPage(*src.meta, fill_cache_, &page);
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
  // Opens the tile before tile t of partition p, at its last entry (none
  // before the table's first tile).
  void LoadTileBefore(size_t p, size_t t) {
    while (t == 0) {
      tile_iter_.reset();
      page_ = nullptr;
      if (p == 0 || !LoadPartition(p - 1)) return;
      p--;
      t = part_->tile_count();
    }
    LoadTile(p, t - 1);
    if (tile_iter_) tile_iter_->SeekToLast();
  }
  void CacheEntry() {
    valid_ = tile_iter_ != nullptr;
    if (valid_) {
      key_ = tile_iter_->key();
      value_ = tile_iter_->value();
      delete_key_ = tile_iter_->delete_key();
    }
  }
  // Moves on to the nearest tile with entries in the direction of travel.
  void SkipEmptyTiles(bool backward = false) {
    while (tile_iter_ != nullptr && !tile_iter_->Valid()) {
      if (!tile_iter_->status().ok()) {
        status_ = Status::Corruption(table_->fname_, tile_iter_->status().message());
        tile_iter_.reset();
        break;
      }
      if (backward) {
        LoadTileBefore(partition_, tile_);
      } else {
        LoadTile(partition_, tile_ + 1);
        if (tile_iter_) tile_iter_->SeekToFirst();
      }
    }
    CacheEntry();
  }

  const TableReader* table_;
  bool fill_cache_;
  const PageOverrides* overrides_;  // pinned by the caller
  size_t partition_ = 0;
  const IndexPartition* part_ = nullptr;  // partition_, or null before the first load
  PartitionRef part_holder_;              // keeps part_ alive unless the table keeps it
  size_t tile_ = 0;                       // in part_
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
