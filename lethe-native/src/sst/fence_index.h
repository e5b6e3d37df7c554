// FenceIndex: finds a table's tile for a key without touching the tiles'
// key strings in the common case. The tiles' keys share a prefix;
// the 8 bytes after it, read as one big-endian number per tile, order the
// tiles as their keys do (ties aside), so a binary search runs over a
// compact array of numbers (8 bytes a tile, cache-resident) and compares
// whole keys only among tiles whose numbers tie.
//
// Thread-safety: immutable after Build; safe for concurrent readers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sst/tile_keys.h"

namespace lethe {

class FenceIndex {
 public:
  // REQUIRES: tiles sorted by largest key; they must outlive the index.
  void Build(const TileKeys* tiles);
  // The first tile whose largest key is >= key (tiles.size() if none).
  size_t LowerBound(std::string_view key) const;
  // Whether key sorts before tile t's smallest key.
  bool BeforeTile(size_t t, std::string_view key) const;
  // Heap memory held (the tiles not counted).
  size_t MemoryUsage() const {
    return prefix_.capacity() + (words_.capacity() + smallest_words_.capacity()) * sizeof(uint64_t);
  }

 private:
  uint64_t WordAfterPrefix(std::string_view key) const;

  const TileKeys* tiles_ = nullptr;
  std::string prefix_;           // common to every tile's smallest and largest key
  std::vector<uint64_t> words_;  // per tile: the 8 bytes of largest after prefix_, zero-padded
  std::vector<uint64_t> smallest_words_;  // the same of smallest
};

}  // namespace lethe
