#include "sst/fence_index.h"

#include <algorithm>

#include "util/shared_prefix.h"

namespace lethe {

void FenceIndex::Build(const TileKeys* tiles) {
  tiles_ = tiles;
  prefix_.clear();
  words_.clear();
  smallest_words_.clear();
  if (tiles->empty()) return;
  // The keys are sorted: the common prefix of all is that of the first and last.
  std::string_view first = tiles->smallest(0), last = tiles->largest(tiles->size() - 1);
  prefix_.assign(first.substr(0, SharedPrefixLength(first, last)));
  words_.reserve(tiles->size());
  smallest_words_.reserve(tiles->size());
  for (size_t t = 0; t < tiles->size(); t++) {
    words_.push_back(WordAfterPrefix(tiles->largest(t)));
    smallest_words_.push_back(WordAfterPrefix(tiles->smallest(t)));
  }
}

bool FenceIndex::BeforeTile(size_t t, std::string_view key) const {
  const std::string_view head = key.substr(0, std::min(key.size(), prefix_.size()));
  if (head != prefix_) return head < std::string_view(prefix_);
  const uint64_t w = WordAfterPrefix(key);
  if (w != smallest_words_[t]) return w < smallest_words_[t];
  return key < tiles_->smallest(t);
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
  // A key outside the prefix sorts before or after every tile.
  const std::string_view head = key.substr(0, std::min(key.size(), prefix_.size()));
  if (head != prefix_) return head < std::string_view(prefix_) ? 0 : tiles_->size();
  const uint64_t w = WordAfterPrefix(key);
  const auto lo = std::lower_bound(words_.begin(), words_.end(), w);
  const auto hi = std::upper_bound(lo, words_.end(), w);
  // Among the tiles whose number ties with the key's, compare whole keys.
  size_t begin = static_cast<size_t>(lo - words_.begin()), end = static_cast<size_t>(hi - words_.begin());
  while (begin < end) {
    const size_t mid = begin + (end - begin) / 2;
    if (tiles_->largest(mid) < key) {
      begin = mid + 1;
    } else {
      end = mid;
    }
  }
  return begin;
}

}  // namespace lethe
