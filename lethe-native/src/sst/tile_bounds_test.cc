#include "sst/tile_bounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "util/random.h"

namespace lethe {
namespace {

TEST(TileBoundsTest, SeparatorsLieBetweenTheKeys) {
  std::string s = "user-row-0042-abcdef";
  ShortenSeparator(&s, "user-row-0047-zzz");
  EXPECT_EQ(s, "user-row-0043");
  s = "abc\x41zz";
  ShortenSeparator(&s, "abc\x42");  // adjacent bytes: raise a later one
  EXPECT_EQ(s, "abc\x41{");
  s = "abc";
  ShortenSeparator(&s, "abcdef");  // a prefix stays
  EXPECT_EQ(s, "abc");
  std::string p = "user-row-0047-zzz";
  ShortenAbove(&p, "user-row-0043");
  EXPECT_EQ(p, "user-row-0047");
  p = "abcdef";
  ShortenAbove(&p, "abc");
  EXPECT_EQ(p, "abcd");
}

std::string RandomKey(Random* rnd) {
  std::string k = "kg";
  const size_t n = rnd->Uniform(12);
  // Few distinct bytes, 0x00 and 0xff among them, so that keys share prefixes and bytes are adjacent.
  for (size_t i = 0; i < n; i++) {
    static const char kBytes[] = {'\0', 'a', 'b', 'c', '\xfe', '\xff'};
    k.push_back(kBytes[rnd->Uniform(sizeof(kBytes))]);
  }
  return k;
}

// For random sorted keys cut into tiles: every key's tile under the shortened
// bounds (first tile whose largest is at or above it) is its own, no key sorts
// before its own tile's smallest, the bounds stay in order, the file's first
// and last keys stay exact, and no bound grows.
TEST(TileBoundsTest, EveryKeyRoutesToItsTileAndTheOrderHolds) {
  Random rnd(301);
  for (int round = 0; round < 300; round++) {
    std::set<std::string> unique;
    const size_t n = 2 + rnd.Uniform(60);
    while (unique.size() < n) unique.insert(RandomKey(&rnd));
    const std::vector<std::string> keys(unique.begin(), unique.end());
    std::vector<TileMeta> tiles;
    std::vector<size_t> owner;
    for (size_t i = 0; i < keys.size();) {
      const size_t len = 1 + rnd.Uniform(4);
      TileMeta t;
      t.smallest = keys[i];
      const size_t end = std::min(keys.size(), i + len);
      t.largest = keys[end - 1];
      for (; i < end; i++) owner.push_back(tiles.size());
      tiles.push_back(std::move(t));
    }
    const std::vector<TileMeta> exact = tiles;
    ShortenTileBounds(&tiles);
    EXPECT_EQ(tiles.front().smallest, exact.front().smallest);
    EXPECT_EQ(tiles.back().largest, exact.back().largest);
    for (size_t t = 0; t < tiles.size(); t++) {
      EXPECT_LE(tiles[t].smallest, exact[t].smallest);
      EXPECT_GE(tiles[t].largest, exact[t].largest);
      EXPECT_LE(tiles[t].smallest.size(), exact[t].smallest.size());
      EXPECT_LE(tiles[t].largest.size(), exact[t].largest.size());
      if (t + 1 < tiles.size()) {
        ASSERT_LT(tiles[t].largest, tiles[t + 1].smallest) << "round " << round << " tile " << t;
      }
    }
    for (size_t i = 0; i < keys.size(); i++) {
      auto it = std::lower_bound(tiles.begin(), tiles.end(), keys[i],
                                 [](const TileMeta& t, const std::string& k) { return t.largest < k; });
      ASSERT_EQ(static_cast<size_t>(it - tiles.begin()), owner[i]) << "round " << round << " key " << i;
      EXPECT_FALSE(keys[i] < it->smallest);
    }
  }
}

TEST(TileBoundsTest, OverlappingNeighboursKeepTheirBounds) {
  std::vector<TileMeta> tiles(2);
  tiles[0].smallest = "a";
  tiles[0].largest = "m-long-key";
  tiles[1].smallest = "c-long-key";
  tiles[1].largest = "z";
  ShortenTileBounds(&tiles);
  EXPECT_EQ(tiles[0].largest, "m-long-key");
  EXPECT_EQ(tiles[1].smallest, "c-long-key");
}

}  // namespace
}  // namespace lethe
