// Per-page Bloom filter on sort keys (docs/formats.md, "Filter region").
//
// Layout: bit array (ceil(bits / 8) bytes) | k (1 byte, number of probes).
// Probes use double hashing over Hash64 of the sort key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lethe {

class BloomBuilder {
 public:
  explicit BloomBuilder(int bits_per_key) : bits_per_key_(bits_per_key) {}
  void AddKey(std::string_view key);
  bool empty() const { return hashes_.empty(); }
  // Appends the filter for the keys added since the last call, then resets.
  void Finish(std::string* dst);

 private:
  int bits_per_key_;
  std::vector<uint64_t> hashes_;
};

// False means "the key is certainly not in the page"; a malformed filter
// answers true (never a false negative).
bool BloomMayContain(std::string_view filter, std::string_view key);

}  // namespace lethe
