#include "memtable/key_filter.h"

#include <algorithm>

namespace lethe {
namespace {

constexpr size_t kBitsPerKey = 10;
constexpr size_t kBlockBits = 512;

// The probes' bit positions in a block: 9 bits each from a remix of the hash
// (the block is chosen by the hash's upper half).
template <typename F>
void ForEachProbe(uint64_t hash, int probes, F&& f) {
  uint64_t h = hash * 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < probes; i++) {
    f(static_cast<unsigned>(h & (kBlockBits - 1)));
    h >>= 9;
  }
}

}  // namespace

KeyFilter::KeyFilter(size_t expected_keys)
    : blocks_(std::max<size_t>(1, (expected_keys * kBitsPerKey + kBlockBits - 1) / kBlockBits)),
      data_(new Block[blocks_]) {
  for (size_t b = 0; b < blocks_; b++) {
    for (auto& w : data_[b].words) w.store(0, std::memory_order_relaxed);
  }
}

const KeyFilter::Block& KeyFilter::BlockOf(uint64_t hash) const {
  // Multiply-shift onto [0, blocks_) from the upper 32 bits.
  return data_[static_cast<size_t>(((hash >> 32) * static_cast<uint64_t>(blocks_)) >> 32)];
}

void KeyFilter::Add(uint64_t hash) {
  Block& block = const_cast<Block&>(BlockOf(hash));
  ForEachProbe(hash, kProbes, [&](unsigned bit) {
    // One writer: a plain read and write instead of an atomic read-modify-write.
    std::atomic<uint64_t>& w = block.words[bit >> 6];
    w.store(w.load(std::memory_order_relaxed) | uint64_t{1} << (bit & 63), std::memory_order_relaxed);
  });
}

bool KeyFilter::MayContain(uint64_t hash) const {
  const Block& block = BlockOf(hash);
  bool all = true;
  ForEachProbe(hash, kProbes, [&](unsigned bit) {
    all = all && (block.words[bit >> 6].load(std::memory_order_relaxed) >> (bit & 63) & 1) != 0;
  });
  return all;
}

}  // namespace lethe
