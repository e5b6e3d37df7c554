#include "sst/bloom.h"

#include <algorithm>

#include "util/hash.h"

namespace lethe {

void BloomBuilder::AddKey(std::string_view key) {
  uint64_t h = Hash64(key.data(), key.size());
  // Consecutive versions of one sort key add the same hash once.
  if (hashes_.empty() || hashes_.back() != h) hashes_.push_back(h);
}

void BloomBuilder::Finish(std::string* dst) {
  size_t bits = std::max<size_t>(64, hashes_.size() * static_cast<size_t>(bits_per_key_));
  size_t bytes = (bits + 7) / 8;
  bits = bytes * 8;
  // k = bits_per_key * ln 2 minimizes the false-positive rate.
  int k = std::clamp(static_cast<int>(bits_per_key_ * 0.69), 1, 30);
  size_t start = dst->size();
  dst->resize(start + bytes, '\0');
  dst->push_back(static_cast<char>(k));
  char* array = dst->data() + start;
  for (uint64_t h : hashes_) {
    uint32_t a = static_cast<uint32_t>(h), delta = static_cast<uint32_t>(h >> 32) | 1;
    for (int j = 0; j < k; j++) {
      size_t bit = a % bits;
      array[bit / 8] |= static_cast<char>(1 << (bit % 8));
      a += delta;
    }
  }
  hashes_.clear();
}

bool BloomMayContain(std::string_view filter, std::string_view key) {
  if (filter.size() < 2) return true;
  size_t bits = (filter.size() - 1) * 8;
  int k = static_cast<unsigned char>(filter.back());
  if (k < 1 || k > 30) return true;
  uint64_t h = Hash64(key.data(), key.size());
  uint32_t a = static_cast<uint32_t>(h), delta = static_cast<uint32_t>(h >> 32) | 1;
  for (int j = 0; j < k; j++) {
    size_t bit = a % bits;
    if ((filter[bit / 8] & (1 << (bit % 8))) == 0) return false;
    a += delta;
  }
  return true;
}

}  // namespace lethe
