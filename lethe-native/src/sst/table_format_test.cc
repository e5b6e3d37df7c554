// The compact index of table format 4: every field of every page and tile
// reads back exactly, whatever the values (no delete key, the widest delete
// key span, pages and filters with gaps, keys sharing nothing or all), and
// is smaller than the format 3 index it replaces; damage is Corruption.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sst/table_format.h"
#include "util/coding.h"
#include "lethe/options.h"
#include "util/random.h"

namespace lethe {
namespace {

PageMeta Page(uint64_t offset, uint32_t size, uint64_t dk_min, uint64_t dk_max, uint64_t filter_offset,
              uint32_t filter_size) {
  PageMeta p;
  p.offset = offset;
  p.size = size;
  p.entries = size / 10 + 1;
  p.delete_key_min = dk_min;
  p.delete_key_max = dk_max;
  p.filter_offset = filter_offset;
  p.filter_size = filter_size;
  p.compression = static_cast<uint8_t>(size % 2 == 0 ? Compression::kLZ4 : Compression::kZSTD);
  p.raw_size = size * 3;
  return p;
}

TileMeta Tile(std::string smallest, std::string largest, std::vector<PageMeta> pages) {
  return TileMeta{std::move(smallest), std::move(largest), std::move(pages)};
}

void ExpectSameIndex(const std::vector<TileMeta>& written, uint64_t filter_base,
                     const std::vector<TileMeta>& read) {
  ASSERT_EQ(written.size(), read.size());
  for (size_t t = 0; t < written.size(); t++) {
    SCOPED_TRACE("tile " + std::to_string(t));
    EXPECT_EQ(written[t].smallest, read[t].smallest);
    EXPECT_EQ(written[t].largest, read[t].largest);
    ASSERT_EQ(written[t].pages.size(), read[t].pages.size());
    for (size_t i = 0; i < written[t].pages.size(); i++) {
      const PageMeta& w = written[t].pages[i];
      const PageMeta& r = read[t].pages[i];
      EXPECT_EQ(w.offset, r.offset) << i;
      EXPECT_EQ(w.size, r.size) << i;
      EXPECT_EQ(w.entries, r.entries) << i;
      EXPECT_EQ(w.delete_key_min, r.delete_key_min) << i;
      EXPECT_EQ(w.delete_key_max, r.delete_key_max) << i;
      EXPECT_EQ(w.filter_size == 0 ? 0 : w.filter_offset - filter_base, r.filter_offset) << i;
      EXPECT_EQ(w.filter_size, r.filter_size) << i;
      EXPECT_EQ(w.compression, r.compression) << i;
      EXPECT_EQ(w.raw_size, r.raw_size) << i;
    }
  }
}

TEST(CompactIndexTest, EveryFieldReadsBackExactly) {
  constexpr uint64_t kBase = 1000;  // the partition's first filter
  const std::vector<TileMeta> tiles = {
      // The first key shares nothing (there is no key before it); an empty key.
      Tile("", "apple", {Page(0, 100, kMaxDeleteKey, kMaxDeleteKey, kBase, 9)}),
      // Keys that share everything with the key before them, and one longer.
      Tile("apple", "apple\x00\xff", {Page(104, 200, 0, UINT64_MAX, kBase + 9, 0),
                                      Page(308, 50, 1'700'000'000'000, 1'700'000'090'000, kBase + 9, 17)}),
      // A gap before a page and before a filter; a delete key of 0.
      Tile("b", "zz", {Page(5000, 7, 0, 0, kBase + 100, 3), Page(5011, 4096, 42, 43, kBase + 103, 200)}),
  };
  std::string encoded;
  EncodeIndex(tiles, kBase, &encoded);
  std::vector<TileMeta> read;
  ASSERT_TRUE(DecodeIndex(encoded, kTableFormatVersion, &read).ok());
  ExpectSameIndex(tiles, kBase, read);
}

TEST(CompactIndexTest, RandomIndexesReadBackAndShrink) {
  Random rnd(301);
  for (int round = 0; round < 50; round++) {
    // Keys as a state backend writes them: a long common prefix, then a few
    // bytes that differ; bounds shortened between tiles.
    const std::string prefix(rnd.Uniform(60), 'k');
    std::vector<TileMeta> tiles;
    uint64_t offset = rnd.Uniform(100), filter = 0;
    for (int t = 0, n = 1 + rnd.Uniform(40); t < n; t++) {
      TileMeta tile{prefix + static_cast<char>('a' + t) + "0", prefix + static_cast<char>('a' + t) + "9", {}};
      for (int i = 0, pages = 1 + rnd.Uniform(4); i < pages; i++) {
        const uint32_t size = 1 + rnd.Uniform(5000);
        const uint32_t filter_size = rnd.OneIn(5) ? 0 : 1 + rnd.Uniform(300);
        const bool expires = rnd.OneIn(2);
        const uint64_t dk_min = expires ? rnd.Next() >> 20 : kMaxDeleteKey;
        tile.pages.push_back(Page(offset, size, dk_min, expires ? dk_min + rnd.Uniform(100000) : kMaxDeleteKey,
                                  filter, filter_size));
        offset += size + kBlockTrailerSize;
        filter += filter_size;
      }
      tiles.push_back(std::move(tile));
    }
    std::string encoded;
    EncodeIndex(tiles, 0, &encoded);
    std::vector<TileMeta> read;
    ASSERT_TRUE(DecodeIndex(encoded, kTableFormatVersion, &read).ok()) << round;
    ASSERT_NO_FATAL_FAILURE(ExpectSameIndex(tiles, 0, read));
    // What format 3 stored: both keys whole, delete keys in 16 bytes, offsets whole.
    size_t format3 = VarintLength(tiles.size());
    for (const TileMeta& t : tiles) {
      format3 += VarintLength(t.smallest.size()) + t.smallest.size() + VarintLength(t.largest.size()) +
                 t.largest.size() + VarintLength(t.pages.size());
      for (const PageMeta& p : t.pages) {
        format3 += VarintLength(p.offset) + VarintLength(p.size) + VarintLength(p.entries) + 16 +
                   VarintLength(p.filter_size == 0 ? 0 : p.filter_offset) + VarintLength(p.filter_size) + 1 +
                   VarintLength(p.raw_size);
      }
    }
    EXPECT_LT(encoded.size(), format3) << round;
  }
}

TEST(CompactIndexTest, DamageIsCorruption) {
  const std::vector<TileMeta> tiles = {Tile("key1", "key5", {Page(0, 100, 7, 9, 0, 9)}),
                                       Tile("key6", "key9", {Page(104, 100, 7, 9, 9, 9)})};
  std::string encoded;
  EncodeIndex(tiles, 0, &encoded);
  // The second tile's smallest key claims more shared bytes than the key
  // before it has: find its shared length (3, "key") after the first tile.
  std::string first;
  EncodeIndex(std::vector<TileMeta>(tiles.begin(), tiles.begin() + 1), 0, &first);
  const size_t at = first.size();  // the tile count is one byte in both
  ASSERT_EQ(3, encoded[at]);
  std::string damaged = encoded;
  damaged[at] = 100;
  std::vector<TileMeta> read;
  EXPECT_TRUE(DecodeIndex(damaged, kTableFormatVersion, &read).IsCorruption());
  // Cut short anywhere: Corruption, never a read past the end.
  for (size_t n = 0; n < encoded.size(); n++) {
    EXPECT_TRUE(DecodeIndex(std::string_view(encoded).substr(0, n), kTableFormatVersion, &read).IsCorruption()) << n;
  }
  // A trailing byte too.
  EXPECT_TRUE(DecodeIndex(encoded + "x", kTableFormatVersion, &read).IsCorruption());
}

}  // namespace
}  // namespace lethe
