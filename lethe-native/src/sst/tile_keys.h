// TileKeys: every tile's smallest and largest sort key of one table, packed
// into one arena: a table's index holds two keys per tile, and as separate
// strings each would cost a 32-byte string object and, past 15 bytes, a heap
// block of its own.
//
// Thread-safety: immutable once built; safe for concurrent readers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lethe {

class TileKeys {
 public:
  // Appends the next tile's keys. False (nothing added) once the arena would
  // pass 4 GiB.
  bool Add(std::string_view smallest, std::string_view largest) {
    if (bytes_.size() + smallest.size() + largest.size() > UINT32_MAX) return false;
    bytes_.append(smallest);
    ends_.push_back(static_cast<uint32_t>(bytes_.size()));
    bytes_.append(largest);
    ends_.push_back(static_cast<uint32_t>(bytes_.size()));
    return true;
  }
  void Shrink() {
    bytes_.shrink_to_fit();
    ends_.shrink_to_fit();
  }
  size_t size() const { return ends_.size() / 2; }
  bool empty() const { return ends_.empty(); }
  std::string_view smallest(size_t t) const { return Key(2 * t); }
  std::string_view largest(size_t t) const { return Key(2 * t + 1); }
  size_t MemoryUsage() const { return bytes_.capacity() + ends_.capacity() * sizeof(uint32_t); }

 private:
  std::string_view Key(size_t i) const {
    const uint32_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }

  std::string bytes_;
  std::vector<uint32_t> ends_;  // where key i ends: tile t's smallest is 2t, largest 2t+1
};

}  // namespace lethe
