#include "sst/fence_index.h"

#include <algorithm>

namespace lethe {

void FenceIndex::Build(const std::vector<TileMeta>* tiles) {
  tiles_ = tiles;
  prefix_.clear();
  words_.clear();
  smallest_words_.clear();
  if (tiles->empty()) return;
  // The keys are sorted: the common prefix of all is that of the first and last.
  std::string_view first = tiles->front().smallest, last = tiles->back().largest;
  size_t n = 0;
  while (n < first.size() && n < last.size() && first[n] == last[n]) n++;
  prefix_.assign(first.substr(0, n));
  words_.reserve(tiles->size());
  smallest_words_.reserve(tiles->size());
  for (const TileMeta& t : *tiles) {
    words_.push_back(WordAfterPrefix(t.largest));
    smallest_words_.push_back(WordAfterPrefix(t.smallest));
  }
}

bool FenceIndex::BeforeTile(size_t t, std::string_view key) const {
  const std::string_view head = key.substr(0, std::min(key.size(), prefix_.size()));
  if (head != prefix_) return head < std::string_view(prefix_);
  const uint64_t w = WordAfterPrefix(key);
  if (w != smallest_words_[t]) return w < smallest_words_[t];
  return key < std::string_view((*tiles_)[t].smallest);
}

uint64_t FenceIndex::WordAfterPrefix(std::string_view key) const {
  uint64_t w = 0;
  for (size_t i = 0; i < 8; i++) {
    const size_t at = prefix_.size() + i;
    w = (w << 8) | (at < key.size() ? static_cast<uint8_t>(key[at]) : 0u);
  }
  return w;
}

size_t FenceIndex::LowerBound(std::string_view key) const {
  const std::vector<TileMeta>& tiles = *tiles_;
  // A key outside the prefix sorts before or after every tile.
  const std::string_view head = key.substr(0, std::min(key.size(), prefix_.size()));
  if (head != prefix_) return head < std::string_view(prefix_) ? 0 : tiles.size();
  const uint64_t w = WordAfterPrefix(key);
  const auto lo = std::lower_bound(words_.begin(), words_.end(), w);
  const auto hi = std::upper_bound(lo, words_.end(), w);
  // Among the tiles whose number ties with the key's, compare whole keys.
  const auto begin = tiles.begin() + (lo - words_.begin()), end = tiles.begin() + (hi - words_.begin());
  const auto it = std::lower_bound(begin, end, key, [](const TileMeta& t, std::string_view k) {
    return std::string_view(t.largest) < k;
  });
  return static_cast<size_t>(it - tiles.begin());
}

}  // namespace lethe
