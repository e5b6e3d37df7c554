// Table file tests: the KiWi layout invariants, lookups, iteration, Bloom
// filters, corruption, and the golden annotated layout of a small file.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "format/internal_key.h"
#include "lethe/env.h"
#include "sst/compression.h"
#include "sst/layout_printer.h"
#include "sst/table_builder.h"
#include "sst/table_reader.h"
#include "test_util.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/random.h"

namespace lethe {
namespace {

struct TestEntry {
  std::string key;
  SequenceNumber seq;
  EntryKind kind;
  std::string value;
  uint64_t dk;
};

class TableTest : public ::testing::Test {
 protected:
  void Build(const std::vector<TestEntry>& entries, TableBuilderOptions opts,
             const std::vector<RangeTombstone>& tombstones = {}) {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_->NewWritableFile(fname_, &f).ok());
    TableBuilder b(opts, f.get());
    for (const auto& e : entries) b.Add(MakeInternalKey(e.key, e.seq, e.kind), e.value, e.dk);
    for (const auto& t : tombstones) b.AddRangeTombstone(t);
    ASSERT_TRUE(b.Finish().ok());
    ASSERT_TRUE(f->Close().ok());
    Open();
  }
  void Open() {
    uint64_t size;
    ASSERT_TRUE(env_->GetFileSize(fname_, &size).ok());
    std::unique_ptr<RandomAccessFile> rf;
    ASSERT_TRUE(env_->NewRandomAccessFile(fname_, &rf).ok());
    TableReader::Options ro;
    ro.counters = &counters_;
    ro.page_cache = cache_.get();
    Status s = TableReader::Open(ro, fname_, file_number_, std::move(rf), size, &table_);
    open_status_ = s;
  }
  // Every tile of the open table, in file order (views valid until the next call).
  std::vector<TileView> Tiles() {
    Status s = table_->ReadPartitions(&partitions_);
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::vector<TileView> tiles;
    for (const PartitionRef& p : partitions_) {
      for (size_t t = 0; t < p->tile_count(); t++) tiles.push_back(p->tile(t));
    }
    return tiles;
  }
  std::string Get(std::string_view key, SequenceNumber seq = kMaxSequenceNumber) {
    GetContext ctx(key, seq);
    Status s = table_->Get(&ctx, false);
    if (!s.ok()) return s.ToString();
    std::string v;
    s = ctx.Finish(&v, nullptr);
    return s.ok() ? v : (s.IsNotFound() ? "NOT_FOUND" : s.ToString());
  }

  // MultiGet of sorted keys, each answer written as Get writes it.
  std::vector<std::string> MultiGet(const std::vector<std::string>& keys, SequenceNumber seq = kMaxSequenceNumber) {
    std::vector<GetContext> ctxs;
    ctxs.reserve(keys.size());
    std::vector<GetContext*> ptrs;
    for (const std::string& k : keys) ptrs.push_back(&ctxs.emplace_back(k, seq));
    table_->MultiGet(ptrs, false);
    std::vector<std::string> out;
    for (GetContext& ctx : ctxs) {
      std::string v;
      Status s = ctx.Finish(&v, nullptr);
      out.push_back(s.ok() ? v : (s.IsNotFound() ? "NOT_FOUND" : s.ToString()));
    }
    return out;
  }
  // Every key of `entries` and the absent keys around and between them, sorted.
  static std::vector<std::string> KeysAndGaps(const std::vector<TestEntry>& entries) {
    std::vector<std::string> keys{"", "a"};
    for (const TestEntry& e : entries) {
      if (keys.back() != e.key) keys.push_back(e.key);
      keys.push_back(e.key + "0");
    }
    keys.push_back("zzz");
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
  }
  // MultiGet answers every key as Get does, in batches of several sizes
  // (waves of the batch included), at the newest sequence and an older one.
  void ExpectMultiGetAsGet(const std::vector<TestEntry>& entries) {
    const std::vector<std::string> keys = KeysAndGaps(entries);
    for (SequenceNumber seq : {kMaxSequenceNumber, SequenceNumber{600}}) {
      for (size_t batch : {size_t{1}, size_t{3}, size_t{17}, size_t{40}}) {
        for (size_t at = 0; at < keys.size(); at += batch) {
          std::vector<std::string> part(keys.begin() + at, keys.begin() + std::min(keys.size(), at + batch));
          std::vector<std::string> got = MultiGet(part, seq);
          for (size_t i = 0; i < part.size(); i++) {
            ASSERT_EQ(got[i], Get(part[i], seq)) << "key '" << part[i] << "' batch " << batch << " seq " << seq;
          }
        }
      }
    }
  }

  // A table of tiles of h pages in more than 20 index partitions, read through a small page cache.
  void BuildPartitioned(const std::vector<TestEntry>& entries, int h) {
    TableBuilderOptions opts{256, h, 10};
    opts.index_partition_size = 200;
    cache_ = std::make_unique<PageCache>(16 << 10);
    Build(entries, opts);
    ASSERT_TRUE(open_status_.ok()) << open_status_.ToString();
    ASSERT_GT(table_->partition_count(), 20u);
  }

  static std::vector<TestEntry> RandomEntries(int n, uint64_t seed) {
    Random rnd(seed);
    std::vector<TestEntry> entries;
    for (int i = 0; i < n; i++) {
      char key[16];
      std::snprintf(key, sizeof(key), "key%06d", i);
      int versions = rnd.OneIn(5) ? 3 : 1;
      for (int v = versions; v >= 1; v--) {
        uint64_t dk = rnd.OneIn(10) ? kMaxDeleteKey : rnd.Uniform(1000);
        entries.push_back({key, static_cast<SequenceNumber>(i * 4 + v), EntryKind::kValue,
                           std::string(10 + rnd.Uniform(60), static_cast<char>('a' + v)), dk});
      }
    }
    return entries;
  }

  std::unique_ptr<MemEnv> env_ = NewMemEnv();
  std::string fname_ = "/t.sst";  // what Build writes and Open opens
  uint64_t file_number_ = 1;
  std::unique_ptr<PageCache> cache_;  // none: the reader keeps its whole index
  std::unique_ptr<TableReader> table_;
  Status open_status_;
  TableReadCounters counters_;
  std::vector<PartitionRef> partitions_;
};

TEST_F(TableTest, KiwiLayoutInvariants) {
  for (int h : {1, 4, 16}) {
    SCOPED_TRACE("h=" + std::to_string(h));
    auto entries = RandomEntries(2000, 7);
    Build(entries, TableBuilderOptions{256, h, 10});
    ASSERT_TRUE(open_status_.ok()) << open_status_.ToString();
    ASSERT_GT(table_->tile_count(), 4u);
    size_t total = 0;
    const std::vector<TileView> tiles = Tiles();
    ASSERT_EQ(table_->tile_count(), tiles.size());
    for (size_t t = 0; t < tiles.size(); t++) {
      const TileView& tile = tiles[t];
      EXPECT_LE(tile.pages.size(), static_cast<size_t>(h));
      if (t > 0) {
        EXPECT_LT(tiles[t - 1].largest, tile.smallest) << "tiles overlap or split a sort key";
      }
      for (size_t p = 0; p < tile.pages.size(); p++) {
        const PageMeta& page = tile.pages[p];
        if (p > 0) {
          EXPECT_LE(tile.pages[p - 1].delete_key_max, page.delete_key_min) << "pages not ordered by delete key";
        }
        PageRef ref;
        ASSERT_TRUE(table_->ReadPage(page, false, &ref).ok());
        PageIterator it(ref);
        std::string prev;
        uint32_t n = 0;
        for (it.SeekToFirst(); it.Valid(); it.Next(), n++) {
          if (!prev.empty()) {
            EXPECT_LT(CompareInternalKey(prev, it.key()), 0);
          }
          prev.assign(it.key());
          EXPECT_GE(it.delete_key(), page.delete_key_min);
          EXPECT_LE(it.delete_key(), page.delete_key_max);
          std::string_view sk = ExtractSortKey(it.key());
          EXPECT_TRUE(tile.smallest <= sk && sk <= tile.largest);
        }
        EXPECT_EQ(n, page.entries);
        total += n;
      }
    }
    EXPECT_EQ(total, entries.size());

    // Iteration yields every entry in internal-key order.
    auto it = table_->NewIterator(false);
    size_t i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
      ASSERT_LT(i, entries.size());
      EXPECT_EQ(it->key(), MakeInternalKey(entries[i].key, entries[i].seq, entries[i].kind));
      EXPECT_EQ(it->value(), entries[i].value);
      EXPECT_EQ(it->delete_key(), entries[i].dk);
    }
    EXPECT_EQ(i, entries.size());
    ASSERT_TRUE(it->status().ok());
    it->Seek(MakeInternalKey("key001000", kMaxSequenceNumber, kSeekKind));
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(ExtractSortKey(it->key()), "key001000");

    // Point lookups: newest version, older versions by sequence, misses.
    for (size_t e = 0; e < entries.size(); e += 37) {
      EXPECT_EQ(Get(entries[e].key, entries[e].seq), entries[e].value);
    }
    uint64_t useful_before = counters_.bloom_useful.Sum();
    for (int m = 0; m < 200; m++) EXPECT_EQ(Get("missing" + std::to_string(m)), "NOT_FOUND");
    EXPECT_EQ(Get("key0009999"), "NOT_FOUND");
    EXPECT_GT(counters_.bloom_useful.Sum(), useful_before);
  }
}

TEST_F(TableTest, TombstonesMergesAndRangeTombstones) {
  Build({{"a", 5, EntryKind::kMerge, "2", 10},
         {"a", 4, EntryKind::kMerge, "1", 9},
         {"b", 6, EntryKind::kTombstone, "", kMaxDeleteKey},
         {"b", 2, EntryKind::kValue, "old", 3},
         {"c", 1, EntryKind::kValue, "c1", 3}},
        TableBuilderOptions{64, 4, 10}, {{"c", "d", 3}});
  ASSERT_TRUE(open_status_.ok());
  EXPECT_EQ(Get("a"), "1,2");
  EXPECT_EQ(Get("b"), "NOT_FOUND");
  EXPECT_EQ(Get("b", 5), "old");
  EXPECT_EQ(Get("c"), "NOT_FOUND");
  EXPECT_EQ(Get("c", 2), "c1");
  EXPECT_EQ(table_->properties().point_tombstones, 1u);
  EXPECT_EQ(table_->properties().merges, 2u);
  EXPECT_EQ(table_->properties().range_tombstones, 1u);
}

TEST_F(TableTest, MultiGetAnswersEveryKeyAsGet) {
  std::vector<TestEntry> entries = RandomEntries(400, 11);
  // Merges, point tombstones and a range tombstone among them.
  entries.insert(entries.begin(), {{"key", 9000, EntryKind::kMerge, "m2", 1}, {"key", 8999, EntryKind::kMerge, "m1", 1}});
  entries.push_back({"key~", 9001, EntryKind::kTombstone, "", kMaxDeleteKey});
  const std::vector<RangeTombstone> tombstones{{"key000100", "key000150", 500}};
  // Without a page cache every page is read by itself; with one, a tile of
  // a single page is read in the batch's steps.
  for (size_t cache_bytes : {size_t{0}, size_t{64} << 10}) {
    cache_ = cache_bytes == 0 ? nullptr : std::make_unique<PageCache>(cache_bytes);
    for (int pages_per_tile : {1, 4}) {
      SCOPED_TRACE("pages per tile " + std::to_string(pages_per_tile) + ", cache " + std::to_string(cache_bytes));
      Build(entries, TableBuilderOptions{256, pages_per_tile, 10}, tombstones);
      ASSERT_TRUE(open_status_.ok());
      ExpectMultiGetAsGet(entries);
    }
  }
}

TEST_F(TableTest, MultiGetFailsOnlyTheKeysOfADamagedPage) {
  const std::vector<TestEntry> entries = RandomEntries(300, 3);
  cache_ = std::make_unique<PageCache>(64 << 10);
  Build(entries, TableBuilderOptions{256, 1, 10});
  std::string data;
  ASSERT_TRUE(env_->ReadFileToString("/t.sst", &data).ok());
  data[10] ^= 0x20;  // in the first page
  ASSERT_TRUE(env_->WriteStringToFile("/t.sst", data).ok());
  Open();
  ASSERT_TRUE(open_status_.ok());
  const std::vector<std::string> keys = KeysAndGaps(entries);
  const std::vector<std::string> got = MultiGet(keys);
  size_t failed = 0, found = 0;
  for (size_t i = 0; i < keys.size(); i++) {
    ASSERT_EQ(got[i], Get(keys[i])) << keys[i];
    if (got[i].find("Corruption") != std::string::npos) {
      failed++;
      EXPECT_NE(got[i].find("/t.sst"), std::string::npos) << got[i];
    }
    if (got[i] != "NOT_FOUND" && got[i].find("Corruption") == std::string::npos) found++;
  }
  EXPECT_GT(failed, 0u);
  EXPECT_GT(found, 250u);
}

// One batch over several tables, their probes interleaved in key order as
// a level's keys are: each key answers as Get answers it in its own table,
// whether its page is cached or not, and a damaged page of one table fails
// only its own keys.
TEST_F(TableTest, MultiGetAcrossTablesAnswersEachKeyAsItsTableDoes) {
  cache_ = std::make_unique<PageCache>(24 << 10);  // a few pages: some cached, most not
  std::vector<std::unique_ptr<TableReader>> tables;
  std::vector<std::vector<std::string>> keys;
  for (uint64_t t = 0; t < 3; t++) {
    fname_ = "/t" + std::to_string(t) + ".sst";
    file_number_ = 10 + t;
    const std::vector<TestEntry> entries = RandomEntries(300, 40 + t);
    Build(entries, TableBuilderOptions{256, t == 2 ? 4 : 1, 10});
    if (t == 1) {  // a damaged page
      std::string data;
      ASSERT_TRUE(env_->ReadFileToString(fname_, &data).ok());
      data[10] ^= 0x20;
      ASSERT_TRUE(env_->WriteStringToFile(fname_, data).ok());
      Open();
    }
    ASSERT_TRUE(open_status_.ok()) << open_status_.ToString();
    tables.push_back(std::move(table_));
    keys.push_back(KeysAndGaps(entries));
  }
  auto get = [&](size_t t, const std::string& key) {
    table_.swap(tables[t]);
    std::string got = Get(key);
    table_.swap(tables[t]);
    return got;
  };
  for (int pass = 0; pass < 2; pass++) {  // the second finds more pages cached
    std::vector<GetContext> ctxs;
    ctxs.reserve(3 * keys[0].size());
    std::vector<TableProbe> probes;
    std::vector<std::pair<size_t, std::string>> asked;
    for (size_t i = 0; i < keys[0].size(); i++) {
      for (size_t t = 0; t < 3; t++) {
        if (i >= keys[t].size()) continue;
        probes.push_back(TableProbe{tables[t].get(), nullptr, &ctxs.emplace_back(keys[t][i], kMaxSequenceNumber)});
        asked.emplace_back(t, keys[t][i]);
      }
    }
    TableReader::MultiGet(probes, /*fill_cache=*/true);
    size_t failed = 0, found = 0;
    for (size_t j = 0; j < ctxs.size(); j++) {
      std::string v;
      const Status s = ctxs[j].Finish(&v, nullptr);
      const std::string got = s.ok() ? v : (s.IsNotFound() ? "NOT_FOUND" : s.ToString());
      ASSERT_EQ(got, get(asked[j].first, asked[j].second)) << "table " << asked[j].first << " key " << asked[j].second;
      if (got.find("Corruption") != std::string::npos) {
        failed++;
        EXPECT_EQ(asked[j].first, 1u);
        EXPECT_NE(got.find("/t1.sst"), std::string::npos) << got;
      } else if (got != "NOT_FOUND") {
        found++;
      }
    }
    EXPECT_GT(failed, 0u);
    EXPECT_GT(found, 800u);
  }
}

TEST_F(TableTest, CorruptionIsReportedWithTheFileName) {
  Build(RandomEntries(300, 3), TableBuilderOptions{256, 4, 10});
  std::string data;
  ASSERT_TRUE(env_->ReadFileToString("/t.sst", &data).ok());
  // A flipped byte in a page: lookups and iteration fail with Corruption.
  std::string damaged = data;
  damaged[10] ^= 0x20;
  ASSERT_TRUE(env_->WriteStringToFile("/t.sst", damaged).ok());
  Open();
  ASSERT_TRUE(open_status_.ok());
  auto it = table_->NewIterator(false);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
  }
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  EXPECT_NE(it->status().message().find("/t.sst"), std::string::npos);
  // Damage in the footer, the index, or a truncated file: Open fails cleanly.
  for (size_t pos : {data.size() - 1, data.size() - 40, data.size() - 200}) {
    damaged = data;
    damaged[pos] ^= 0x41;
    ASSERT_TRUE(env_->WriteStringToFile("/t.sst", damaged).ok());
    Open();
    EXPECT_FALSE(open_status_.ok()) << pos;
  }
  ASSERT_TRUE(env_->WriteStringToFile("/t.sst", data.substr(0, data.size() / 2)).ok());
  Open();
  EXPECT_TRUE(open_status_.IsCorruption()) << open_status_.ToString();
}

// Found by fuzz/table_reader_fuzzer: a footer whose block sizes are near
// 2^64, so that size + trailer wrapped past the bounds check, and the reader
// took the CRC from before its buffer.
TEST_F(TableTest, FuzzBlockSizeThatWrapsIsCorruption) {
  const std::string footer_only(
      "\x00\x00\x00\x00\x00\x00\x00\x00\xfc\xff\xff\xff\xff\xff\xff\xff"
      "\x09\x00\x00\x00\x00\x00\x00\x00\x27\x00\x00\x00\x00\x00\x00\x00"
      "\x02\x00\x00\x00\x00\x00\x00\x00\xfc\xff\xff\xff\xff\xff\xff\xff"
      "\x09\x00\x00\x00\x00\x00\x00\x00\x27\x00\x00\x00\x00\x00\x00\x00"
      "\x01\x00\x00\x00\x57\x49\x4b\x45\x48\x54\x45\x4c",
      kFooterSize);
  ASSERT_TRUE(env_->WriteStringToFile("/t.sst", footer_only).ok());
  Open();
  EXPECT_TRUE(open_status_.IsCorruption()) << open_status_.ToString();
  EXPECT_NE(open_status_.message().find("outside the file"), std::string::npos) << open_status_.ToString();
}

// Page metadata from the index whose offset + size wraps: the bounds check
// at Open passed, and a filter offset near 2^64 later threw out of
// std::string_view::substr in a lookup.
TEST_F(TableTest, PageBoundsThatWrapAreCorruption) {
  Build(RandomEntries(50, 5), TableBuilderOptions{256, 2, 10});
  ASSERT_TRUE(open_status_.ok());
  std::string data;
  ASSERT_TRUE(env_->ReadFileToString("/t.sst", &data).ok());
  Footer footer;
  ASSERT_TRUE(footer.DecodeFrom(std::string_view(data).substr(data.size() - kFooterSize)).ok());
  auto block = [&](const BlockHandle& h) { return std::string_view(data).substr(h.offset, h.size); };
  std::vector<PartitionMeta> partitions;
  ASSERT_TRUE(DecodeTopLevelIndex(block(footer.index), &partitions).ok());
  ASSERT_EQ(1u, partitions.size());
  std::vector<TileMeta> tiles;
  std::string_view filters;
  ASSERT_TRUE(DecodePartition(block(partitions[0].handle), footer.version, &tiles, &filters).ok());
  // Each damage in a new partition and top-level index written after the
  // old blocks, with a new footer pointing at them (so every checksum
  // matches; the partition region grows to hold the new partition).
  auto append_block = [](std::string* file, std::string_view contents) {
    file->append(contents);
    PutFixed32(file, crc32c::Mask(crc32c::Value(contents.data(), contents.size())));
  };
  auto with_index = [&](const std::vector<TileMeta>& damaged) {
    std::string file = data.substr(0, data.size() - kFooterSize), partition, top;
    EncodePartition(damaged, filters, &partition);
    std::vector<PartitionMeta> moved = partitions;
    moved[0].handle = BlockHandle{file.size(), partition.size()};
    append_block(&file, partition);
    EncodeTopLevelIndex(moved, &top);
    Footer f = footer;
    f.index = BlockHandle{file.size(), top.size()};
    append_block(&file, top);
    f.filter.size = file.size() - f.filter.offset;
    f.EncodeTo(&file);
    return file;
  };
  for (int field = 0; field < 4; field++) {
    std::vector<TileMeta> damaged = tiles;
    PageMeta& page = damaged[1].pages[0];
    if (field == 0) {
      page.offset = UINT64_MAX - page.size - kBlockTrailerSize + 1;  // offset + size + trailer == 0
    } else if (field == 1) {
      page.filter_offset = UINT64_MAX;  // filter offset + size == 0
      page.filter_size = 1;
    } else if (field == 2) {
      page.compression = 3;  // no such codec
    } else {
      page.compression = static_cast<uint8_t>(Compression::kZSTD);  // would allocate 4 GiB to decode
      page.raw_size = UINT32_MAX;
    }
    ASSERT_TRUE(env_->WriteStringToFile("/t.sst", with_index(damaged)).ok());
    Open();
    EXPECT_TRUE(open_status_.IsCorruption()) << field << ": " << open_status_.ToString();
    if (open_status_.ok()) Get(damaged[1].smallest);  // before the fix: threw, or read past the file
  }
}

// Every page is compressed on its own: a table reads back the same with
// every codec, and compressible pages take less room.
TEST_F(TableTest, CompressedTablesReadBackExactly) {
  auto entries = RandomEntries(2000, 11);  // values repeat one character: they compress
  std::map<Compression, uint64_t> sizes;
  std::vector<std::string> reference;
  for (Compression c : {Compression::kNone, Compression::kLZ4, Compression::kZSTD}) {
    SCOPED_TRACE(CompressionName(c));
    Build(entries, TableBuilderOptions{1024, 4, 10, c});
    ASSERT_TRUE(open_status_.ok()) << open_status_.ToString();
    ASSERT_TRUE(env_->GetFileSize("/t.sst", &sizes[c]).ok());
    size_t compressed = 0, pages = 0;
    for (const TileView& tile : Tiles()) {
      for (const PageMeta& p : tile.pages) {
        pages++;
        compressed += p.compression == static_cast<uint8_t>(c) ? 1 : 0;
        EXPECT_TRUE(c == Compression::kNone ? p.raw_size == p.size : p.raw_size > p.size);
      }
    }
    EXPECT_EQ(pages, compressed);
    std::vector<std::string> seen;
    auto it = table_->NewIterator(false);
    for (it->SeekToFirst(); it->Valid(); it->Next()) seen.push_back(std::string(it->key()) + "=" + std::string(it->value()));
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    if (reference.empty()) reference = seen;
    EXPECT_EQ(reference, seen);
    for (int i = 0; i < 2000; i += 37) {
      char key[16];
      std::snprintf(key, sizeof(key), "key%06d", i);
      EXPECT_NE("NOT_FOUND", Get(key)) << key;
    }
  }
  EXPECT_LT(sizes[Compression::kLZ4], sizes[Compression::kNone] / 2);
  EXPECT_LT(sizes[Compression::kZSTD], sizes[Compression::kNone] / 2);
}

// With one page per tile, a page ends at page_size or less than one entry
// past it (the last, which may run over), counted in encoded bytes:
// prefix-shared keys do not leave pages short.
TEST_F(TableTest, OnePageTilesFillTheirPageSize) {
  constexpr size_t kPageSize = 4096;
  std::vector<TestEntry> entries;
  for (int i = 0; i < 20000; i++) {
    char key[24];
    std::snprintf(key, sizeof(key), "user%012d", i);  // long shared prefixes
    entries.push_back({key, static_cast<SequenceNumber>(i + 1), EntryKind::kValue, std::string(100, 'v'), kMaxDeleteKey});
  }
  Build(entries, TableBuilderOptions{kPageSize, 1, 10, Compression::kNone});
  ASSERT_TRUE(open_status_.ok()) << open_status_.ToString();
  const size_t largest_entry = 3 + 16 + 8 + 100 + 1 + 4;  // varints, key, tag, value, delete key, restart
  const std::vector<TileView> tiles = Tiles();
  ASSERT_GT(tiles.size(), 10u);
  for (size_t t = 0; t + 1 < tiles.size(); t++) {  // the last page holds what is left
    const PageMeta& p = tiles[t].pages[0];
    EXPECT_GE(p.raw_size, kPageSize) << "tile " << t;
    EXPECT_LT(p.raw_size, kPageSize + largest_entry + 4) << "tile " << t;  // + the restart count
  }
}

// A compressed page whose bytes are damaged but whose checksum matches (a
// bug, or no verification): the codec's failure is Corruption naming the
// file, never a crash or a page of garbage.
TEST_F(TableTest, UndecodableCompressedPageIsCorruption) {
  Build(RandomEntries(300, 3), TableBuilderOptions{1024, 1, 10, Compression::kLZ4});
  ASSERT_TRUE(open_status_.ok());
  const PageMeta page = Tiles()[0].pages[0];
  ASSERT_EQ(static_cast<uint8_t>(Compression::kLZ4), page.compression);
  std::string data;
  ASSERT_TRUE(env_->ReadFileToString("/t.sst", &data).ok());
  for (uint64_t i = 0; i < page.size; i++) data[page.offset + i] = static_cast<char>(0xf0 ^ i);
  EncodeFixed32(data.data() + page.offset + page.size, crc32c::Mask(crc32c::Value(data.data() + page.offset, page.size)));
  ASSERT_TRUE(env_->WriteStringToFile("/t.sst", data).ok());
  Open();
  ASSERT_TRUE(open_status_.ok());
  auto it = table_->NewIterator(false);
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  EXPECT_NE(it->status().message().find("/t.sst"), std::string::npos) << it->status().ToString();
}

// Every read of a table whose index is split into many partitions answers
// as the same table with one partition, whether the reader keeps the
// partitions or reads them through a page cache too small to hold them all.
TEST_F(TableTest, PartitionedIndexReadsAsOnePartition) {
  for (int h : {1, 4}) {
    SCOPED_TRACE("h=" + std::to_string(h));
    const std::vector<TestEntry> entries = RandomEntries(2000, 13);
    const std::vector<std::string> keys = KeysAndGaps(entries);
    auto reads = [&] {
      std::vector<std::string> out;
      for (const std::string& k : keys) out.push_back(Get(k) + "|" + Get(k, 600));
      auto it = table_->NewIterator(true);
      for (it->SeekToFirst(); it->Valid(); it->Next()) out.push_back(std::string(it->key()));
      for (size_t i = 0; i < keys.size(); i += 7) {
        it->Seek(MakeInternalKey(keys[i], kMaxSequenceNumber, kSeekKind));
        out.push_back(it->Valid() ? std::string(it->key()) : "END");
      }
      out.push_back(it->status().ToString());
      for (const std::string& k : keys) out.push_back(table_->MayContain(k) ? "1" : "0");
      return out;
    };
    TableBuilderOptions whole{256, h, 10};
    whole.index_partition_size = 0;
    cache_.reset();
    Build(entries, whole);
    ASSERT_TRUE(open_status_.ok()) << open_status_.ToString();
    ASSERT_EQ(1u, table_->partition_count());
    const std::vector<std::string> expected = reads();

    TableBuilderOptions split = whole;
    split.index_partition_size = 200;
    const uint64_t reads_before = counters_.partition_reads.Sum();
    Build(entries, split);  // no cache: the reader keeps the whole index, merged
    ASSERT_TRUE(open_status_.ok()) << open_status_.ToString();
    EXPECT_EQ(1u, table_->partition_count());
    const uint64_t kept_reads = counters_.partition_reads.Sum();
    EXPECT_GT(kept_reads - reads_before, 20u) << "every partition read at open";
    EXPECT_EQ(expected, reads());
    EXPECT_EQ(kept_reads, counters_.partition_reads.Sum());

    cache_ = std::make_unique<PageCache>(16 << 10);
    Open();
    ASSERT_TRUE(open_status_.ok()) << open_status_.ToString();
    ASSERT_GT(table_->partition_count(), 20u);
    EXPECT_EQ(kept_reads, counters_.partition_reads.Sum()) << "opening read partitions";
    EXPECT_EQ(expected, reads());
    ExpectMultiGetAsGet(entries);
    // The cache holds a few partitions: they were read again and again.
    EXPECT_GT(counters_.partition_reads.Sum() - kept_reads, 2 * table_->partition_count());
    cache_.reset();
  }
}

// Backward iteration over tiles of several pages and over many partitions
// visits exactly the forward entries in reverse, and SeekForPrev finds the
// last entry at or before its target, across tile and partition borders.
TEST_F(TableTest, IteratesBackwardAsForwardReversed) {
  for (int h : {1, 4}) {
    SCOPED_TRACE("h=" + std::to_string(h));
    const std::vector<TestEntry> entries = RandomEntries(2000, 17);
    ASSERT_NO_FATAL_FAILURE(BuildPartitioned(entries, h));
    auto it = table_->NewIterator(true);
    std::vector<std::string> forward, backward;
    for (it->SeekToFirst(); it->Valid(); it->Next()) forward.emplace_back(it->key());
    for (it->SeekToLast(); it->Valid(); it->Prev()) backward.emplace_back(it->key());
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    ASSERT_GT(forward.size(), 1000u);
    std::reverse(backward.begin(), backward.end());
    EXPECT_EQ(forward, backward);
    for (size_t i = 0; i < forward.size(); i += 13) {
      it->SeekForPrev(forward[i]);
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(forward[i], it->key());
      it->Prev();
      if (i == 0) {
        EXPECT_FALSE(it->Valid());
        continue;
      }
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(forward[i - 1], it->key());
      it->Next();
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(forward[i], it->key());
    }
    cache_.reset();
  }
}

// An iterator sought again from wherever it stands (often within its tile,
// as a read skipping range-deleted keys does) lands where a fresh iterator
// does: ahead, behind, within the same tile, across partitions and past the
// end.
TEST_F(TableTest, SeekFromAnyPositionLandsAsAFreshIterator) {
  for (int h : {1, 4}) {
    SCOPED_TRACE("h=" + std::to_string(h));
    const std::vector<TestEntry> entries = RandomEntries(2000, 23);
    ASSERT_NO_FATAL_FAILURE(BuildPartitioned(entries, h));
    const std::vector<std::string> keys = KeysAndGaps(entries);
    auto landing = [](InternalIterator* it, const std::string& target) {
      it->Seek(target);
      return it->Valid() ? std::string(it->key()) : "END";
    };
    Random rnd(5);
    auto reused = table_->NewIterator(true);
    size_t at = 0;
    for (int i = 0; i < 3000; i++) {
      // Mostly a few keys ahead or behind, sometimes anywhere.
      const size_t step = rnd.Uniform(6);
      at = rnd.OneIn(8) ? rnd.Uniform(keys.size())
                        : (rnd.OneIn(3) ? at - std::min(at, step) : std::min(keys.size() - 1, at + step));
      const std::string target = MakeInternalKey(keys[at], rnd.OneIn(2) ? kMaxSequenceNumber : 600, kSeekKind);
      auto fresh = table_->NewIterator(true);
      ASSERT_EQ(landing(fresh.get(), target), landing(reused.get(), target)) << "key '" << keys[at] << "'";
      for (int n = static_cast<int>(rnd.Uniform(3)); n > 0 && reused->Valid(); n--) {
        reused->Next();
        fresh->Next();
        ASSERT_EQ(fresh->Valid(), reused->Valid());
        if (fresh->Valid()) {
          ASSERT_EQ(fresh->key(), reused->key());
        }
      }
    }
    ASSERT_TRUE(reused->status().ok()) << reused->status().ToString();
    cache_.reset();
  }
}

// A damaged index partition fails the lookups that need it, and only those,
// with Corruption naming the file; a reader that keeps every partition
// fails to open.
TEST_F(TableTest, DamagedIndexPartitionFailsOnlyItsKeys) {
  const std::vector<TestEntry> entries = RandomEntries(1000, 17);
  TableBuilderOptions opts{256, 1, 10};
  opts.index_partition_size = 300;
  cache_ = std::make_unique<PageCache>(1 << 20);
  Build(entries, opts);
  ASSERT_TRUE(open_status_.ok()) << open_status_.ToString();
  ASSERT_GT(table_->partition_count(), 4u);
  PartitionRef victim;
  ASSERT_TRUE(table_->ReadPartition(2, false, &victim).ok());
  const std::string first(victim->tile(0).smallest), last(victim->tile(victim->tile_count() - 1).largest);
  // Flip a byte inside partition 2's block: its offset is its first page's
  // filter region... found by searching the file for the block's bytes.
  std::string data;
  ASSERT_TRUE(env_->ReadFileToString("/t.sst", &data).ok());
  Footer footer;
  ASSERT_TRUE(footer.DecodeFrom(std::string_view(data).substr(data.size() - kFooterSize)).ok());
  std::vector<PartitionMeta> partitions;
  ASSERT_TRUE(DecodeTopLevelIndex(std::string_view(data).substr(footer.index.offset, footer.index.size), &partitions).ok());
  data[partitions[2].handle.offset + partitions[2].handle.size / 2] ^= 0x20;
  ASSERT_TRUE(env_->WriteStringToFile("/t.sst", data).ok());
  cache_ = std::make_unique<PageCache>(1 << 20);  // nothing of the old file cached
  Open();
  ASSERT_TRUE(open_status_.ok()) << open_status_.ToString();
  std::vector<std::string> keys;
  for (const TestEntry& e : entries) {
    if (keys.empty() || keys.back() != e.key) keys.push_back(e.key);
  }
  const std::vector<std::string> batch = MultiGet(keys);
  size_t failed = 0;
  for (size_t i = 0; i < keys.size(); i++) {
    const bool inside = first <= keys[i] && keys[i] <= last;
    const std::string got = Get(keys[i]);
    EXPECT_EQ(inside, got.find("Corruption") != std::string::npos) << keys[i] << ": " << got;
    if (inside) {
      EXPECT_NE(std::string::npos, got.find("/t.sst")) << got;
    }
    EXPECT_EQ(got, batch[i]) << keys[i];
    failed += inside ? 1 : 0;
  }
  EXPECT_GT(failed, 0u);
  auto it = table_->NewIterator(false);
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) n++;
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  cache_.reset();
  Open();
  EXPECT_TRUE(open_status_.IsCorruption()) << open_status_.ToString();
}

// A page the engine dropped is a punched hole (zeros) in the file. Without
// the manifest, the layout dump shows it as one and goes on; a page damaged
// otherwise still fails the dump.
TEST_F(TableTest, LayoutDumpShowsAPunchedHoleAndGoesOn) {
  std::vector<TestEntry> entries;
  for (int i = 0; i < 64; i++) {
    char key[8];
    std::snprintf(key, sizeof(key), "k%02d", i);
    entries.push_back({key, static_cast<SequenceNumber>(100 + i), EntryKind::kValue, std::string(40, 'v'), 7});
  }
  Build(entries, TableBuilderOptions{256, 1, 10});
  const PageMeta first = Tiles()[0].pages[0];
  std::string data;
  ASSERT_TRUE(env_->ReadFileToString("/t.sst", &data).ok());
  std::string holed = data;
  std::fill(holed.begin() + first.offset, holed.begin() + first.offset + first.size + 4, '\0');
  ASSERT_TRUE(env_->WriteStringToFile("/t.sst", holed).ok());
  std::string layout;
  Status s = PrintTableLayout(env_.get(), "/t.sst", true, &layout);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_NE(layout.find("a punched hole"), std::string::npos) << layout;
  EXPECT_NE(layout.find("k63"), std::string::npos) << "the pages after it are dumped";
  std::string damaged = data;
  damaged[first.offset] ^= 0x5a;
  ASSERT_TRUE(env_->WriteStringToFile("/t.sst", damaged).ok());
  layout.clear();
  EXPECT_TRUE(PrintTableLayout(env_.get(), "/t.sst", true, &layout).IsCorruption());
}

// The golden layout: a small file with h = 4 whose pages show the delete-key
// order inside each tile. Regenerate with LETHE_UPDATE_GOLDEN=1.
TEST_F(TableTest, GoldenLayout) {
  std::vector<TestEntry> entries;
  const uint64_t dks[] = {40, 10, 30, 20, kMaxDeleteKey, 5, 25, 15};
  for (int i = 0; i < 16; i++) {
    char key[8];
    std::snprintf(key, sizeof(key), "k%02d", i);
    entries.push_back({key, static_cast<SequenceNumber>(100 + i), i % 7 == 3 ? EntryKind::kTombstone : EntryKind::kValue,
                       i % 7 == 3 ? "" : "v" + std::to_string(i), dks[i % 8]});
  }
  Build(entries, TableBuilderOptions{64, 4, 10}, {{"k05", "k07", 99}});
  std::string layout;
  ASSERT_TRUE(PrintTableLayout(env_.get(), "/t.sst", true, &layout).ok());
  ExpectMatchesGolden("table_layout_h4.txt", layout);
}

}  // namespace
}  // namespace lethe
