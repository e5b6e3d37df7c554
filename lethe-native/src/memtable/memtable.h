// MemTable: the in-memory sorted buffer of one column family's recent
// writes, and the range tombstones written with them.
//
// Entry layout in the arena:
//   varint32 internal_key_size | internal key | varint32 value_size | value |
//   fixed64 delete_key
//
// Thread-safety: Add and AddRangeTombstone need external synchronization
// (the DB's write lock); every other method may run concurrently with them.
// Shared through std::shared_ptr: readers keep a memtable alive.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "format/internal_key.h"
#include "format/get_context.h"
#include "iterator/internal_iterator.h"
#include "memtable/arena.h"
#include "memtable/btree.h"
#include "format/range_tombstone.h"
#include "memtable/key_filter.h"

namespace lethe {

class MemTable {
 public:
  // expected_keys: about how many entries it will take (its predecessor's
  // count), for the filter that lets lookups of absent keys skip the skip
  // list; 0: no filter. arena_block: see Arena.
  explicit MemTable(size_t expected_keys = 0, size_t arena_block = Arena::kBlockSize)
      : expected_keys_(expected_keys), arena_(arena_block), table_(EntryKeys(), &arena_) {}
  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;

  void Add(SequenceNumber seq, EntryKind kind, std::string_view key, std::string_view value,
           uint64_t delete_key);
  void AddRangeTombstone(SequenceNumber seq, std::string_view start, std::string_view end);
  // Gives a memtable made without a key filter (expected_keys 0) one sized
  // for the keys it holds. Only before anyone else reads it: for the
  // survivors of a compaction in memory, counted once they are all in.
  void AddKeyFilter();

  // Feeds the key's entries visible at ctx->read_seq() into ctx, newest first.
  void Get(GetContext* ctx) const;

  std::unique_ptr<InternalIterator> NewIterator() const;
  std::vector<RangeTombstone> RangeTombstones() const;
  // The range tombstones fragmented for lookups (null if none); built again
  // when tombstones were added since, and shared until then.
  std::shared_ptr<const FragmentedTombstones> FragmentedRangeTombstones() const;
  bool HasRangeTombstones() const { return num_range_tombstones_.load() > 0; }

  size_t ApproximateMemoryUsage() const {
    const KeyFilter* f = filter_.load(std::memory_order_relaxed);
    return arena_.MemoryUsage() + tombstone_bytes_.load() + (f != nullptr ? f->bytes() : 0);
  }
  uint64_t num_entries() const { return num_entries_.load(std::memory_order_relaxed); }
  // Distinct sort keys among its entries.
  uint64_t num_keys() const { return num_keys_.load(std::memory_order_relaxed); }
  // The smallest sequence number of its entries and range tombstones (0
  // while empty): the first added, unless they were added out of order (the
  // survivors of a compaction in memory).
  SequenceNumber first_sequence() const { return first_seq_.load(std::memory_order_relaxed); }
  uint64_t num_point_tombstones() const { return num_point_tombstones_.load(); }
  bool empty() const { return num_entries() == 0 && !HasRangeTombstones(); }

  // Keeps `token` until this memtable is destroyed, its memory freed: the
  // memory budget's charge for it once flushed. Under the writers'
  // synchronization, once.
  void HoldUntilFreed(std::shared_ptr<void> token) { charge_ = std::move(token); }

 private:
  // The table's view of an entry: its internal key's order and its sort key.
  struct EntryKeys {
    int Compare(const char* a, const char* b) const;
    std::string_view UserKey(const char* entry) const;
  };
  using Table = BTree<EntryKeys>;
  class Iter;
  void NoteSequence(SequenceNumber seq);  // under the writer's synchronization

  // First, so that it goes last: the charge ends once the arena is freed.
  std::shared_ptr<void> charge_;
  const size_t expected_keys_;
  Arena arena_;
  Table table_;
  // Made at the first Add (so that its memory is counted as that entry's),
  // then never replaced.
  std::unique_ptr<KeyFilter> filter_owner_;
  std::atomic<const KeyFilter*> filter_{nullptr};
  std::atomic<uint64_t> num_entries_{0};
  std::atomic<uint64_t> num_keys_{0};
  std::atomic<SequenceNumber> first_seq_{0};
  std::atomic<uint64_t> num_point_tombstones_{0};

  mutable std::mutex tombstones_mu_;
  std::vector<RangeTombstone> tombstones_;  // guarded by tombstones_mu_
  mutable std::shared_ptr<const FragmentedTombstones> fragmented_;  // of the first fragmented_count_
  mutable size_t fragmented_count_ = 0;                              // tombstones_mu_
  std::atomic<uint64_t> num_range_tombstones_{0};
  std::atomic<size_t> tombstone_bytes_{0};
};

}  // namespace lethe
