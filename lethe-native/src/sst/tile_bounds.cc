#include "sst/tile_bounds.h"

#include <algorithm>

#include "util/shared_prefix.h"

namespace lethe {

void ShortenSeparator(std::string* start, std::string_view limit) {
  const size_t diff = SharedPrefixLength(*start, limit);
  if (diff >= start->size() || diff >= limit.size()) return;  // one is a prefix of the other
  const auto byte = static_cast<uint8_t>((*start)[diff]);
  if (byte < 0xff && byte + 1 < static_cast<uint8_t>(limit[diff])) {
    // start[0..diff] with that byte raised: above start, below limit at diff.
    start->resize(diff + 1);
    (*start)[diff] = static_cast<char>(byte + 1);
    return;
  }
  // The bytes at diff are adjacent: keep start's byte there (below limit's),
  // and raise the first later byte that can be raised.
  for (size_t i = diff + 1; i < start->size(); i++) {
    const auto b = static_cast<uint8_t>((*start)[i]);
    if (b < 0xff) {
      start->resize(i + 1);
      (*start)[i] = static_cast<char>(b + 1);
      return;
    }
  }
}

void ShortenAbove(std::string* key, std::string_view above) {
  // The first byte where key exceeds `above` (or where `above` ends) decides.
  key->resize(std::min(key->size(), SharedPrefixLength(*key, above) + 1));
}

void ShortenTileBounds(std::vector<TileMeta>* tiles) {
  for (size_t t = 0; t + 1 < tiles->size(); t++) {
    TileMeta& tile = (*tiles)[t];
    TileMeta& next = (*tiles)[t + 1];
    // Patch tables may hold overlapping tiles (addressed by position): leave those.
    if (!(tile.largest < next.smallest)) continue;
    ShortenSeparator(&tile.largest, next.smallest);
    ShortenAbove(&next.smallest, tile.largest);
  }
}

}  // namespace lethe
