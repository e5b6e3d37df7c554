#include "sst/fence_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sst/table_format.h"
#include "util/random.h"

namespace lethe {
namespace {

size_t Expected(const std::vector<TileMeta>& tiles, std::string_view key) {
  auto it = std::lower_bound(tiles.begin(), tiles.end(), key,
                             [](const TileMeta& t, std::string_view k) { return std::string_view(t.largest) < k; });
  return static_cast<size_t>(it - tiles.begin());
}

std::string RandomKey(Random* rnd, const std::string& prefix) {
  std::string k = rnd->OneIn(20) ? "" : prefix.substr(0, rnd->Uniform(prefix.size() + 1));
  const size_t extra = rnd->Uniform(20);
  // Few distinct bytes, so that keys share long stretches and words tie.
  for (size_t i = 0; i < extra; i++) k.push_back(rnd->OneIn(3) ? '\0' : static_cast<char>('a' + rnd->Uniform(3)));
  if (rnd->OneIn(10)) k.push_back('\xff');
  return k;
}

TEST(FenceIndexTest, AnswersAsComparingTheKeys) {
  Random rnd(9);
  for (const std::string& prefix : {std::string(), std::string("k0000000"), std::string("\x00\x01group", 7)}) {
    for (int round = 0; round < 30; round++) {
      std::vector<std::string> keys;
      const size_t n = rnd.Uniform(200);
      for (size_t i = 0; i < n; i++) keys.push_back(prefix + RandomKey(&rnd, ""));
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      // Tiles of one or two keys: smallest and largest.
      std::vector<TileMeta> tiles;
      for (size_t i = 0; i < keys.size(); i++) {
        TileMeta t;
        t.smallest = keys[i];
        if (i + 1 < keys.size() && rnd.OneIn(2)) i++;
        t.largest = keys[i];
        tiles.push_back(t);
      }
      TileKeys packed;
      for (const TileMeta& t : tiles) ASSERT_TRUE(packed.Add(t.smallest, t.largest));
      packed.Shrink();
      ASSERT_EQ(tiles.size(), packed.size());
      for (size_t t = 0; t < tiles.size(); t++) {
        ASSERT_EQ(tiles[t].smallest, packed.smallest(t));
        ASSERT_EQ(tiles[t].largest, packed.largest(t));
      }
      FenceIndex index;
      index.Build(&packed);
      for (int q = 0; q < 300; q++) {
        const std::string key = RandomKey(&rnd, prefix + RandomKey(&rnd, ""));
        const size_t t = index.LowerBound(key);
        ASSERT_EQ(Expected(tiles, key), t) << "prefix size " << prefix.size();
        if (t < tiles.size()) {
          ASSERT_EQ(key < tiles[t].smallest, index.BeforeTile(t, key)) << key;
        }
      }
      for (const std::string& k : keys) ASSERT_EQ(Expected(tiles, k), index.LowerBound(k));
    }
  }
}

}  // namespace
}  // namespace lethe
