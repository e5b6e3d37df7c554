// KeyFilter: a Bloom filter over the sort keys of one memtable, so that a
// lookup of a key the memtable does not hold (most lookups of new keys and
// windows) need not search the table (a few cache misses).
//
// Blocked: all probes of a key fall into one 64-byte block, one cache miss
// per lookup. About 10 bits per expected key; more keys than expected only
// raise the false-positive rate, never hide a key.
//
// Thread-safety: one writer (the memtable's), readers concurrently. Bits are
// only set; the writer sets a key's bits before the entry is published, so a
// reader that may see the entry sees its bits.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace lethe {

class KeyFilter {
 public:
  explicit KeyFilter(size_t expected_keys);
  KeyFilter(const KeyFilter&) = delete;
  KeyFilter& operator=(const KeyFilter&) = delete;

  // hash: Hash64 of the sort key.
  void Add(uint64_t hash);
  bool MayContain(uint64_t hash) const;
  size_t bytes() const { return blocks_ * sizeof(Block); }

 private:
  static constexpr int kProbes = 6;
  struct alignas(64) Block {
    std::atomic<uint64_t> words[8];
  };
  const Block& BlockOf(uint64_t hash) const;

  size_t blocks_;
  std::unique_ptr<Block[]> data_;
};

}  // namespace lethe
