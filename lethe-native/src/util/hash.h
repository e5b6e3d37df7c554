// A fast 64-bit hash for Bloom filters and cache sharding. Not
// cryptographic; stable across runs and platforms because Bloom filters
// are persisted with it (changing it is a format change).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lethe {

inline uint64_t Hash64(const char* data, size_t n, uint64_t seed = 0x9e3779b97f4a7c15ull) {
  constexpr uint64_t kMul = 0xff51afd7ed558ccdull;
  uint64_t h = seed ^ (n * kMul);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, data, 8);
    h ^= w * 0xc4ceb9fe1a85ec53ull;
    h = ((h << 31) | (h >> 33)) * kMul;
    data += 8;
    n -= 8;
  }
  uint64_t tail = 0;
  if (n > 0) std::memcpy(&tail, data, n);  // n < 8
  h ^= tail * 0xc4ceb9fe1a85ec53ull;
  // Final avalanche (murmur3 fmix64).
  h ^= h >> 33;
  h *= kMul;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace lethe
