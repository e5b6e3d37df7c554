// CompactionStream: the rewrite rules that flush and compaction share. It
// reads a merged input in internal-key order and yields, per sort key, the
// entries that must survive:
//
//  * Versions are grouped into snapshot stripes (entries no live snapshot can
//    tell apart). Per stripe only the newest visible state survives: a value,
//    a tombstone, or merge operands folded into one value or one operand.
//  * An entry under a range tombstone of its own stripe is dropped.
//  * A point tombstone is dropped when nothing older remains: no older entry
//    in the input and no overlapping file in a deeper level.
//  * Range tombstones are cut into fragments; per fragment and stripe only
//    the newest survives; at the bottom, one visible to every snapshot and
//    covering no deeper file is dropped.
//  * An entry under a secondary delete (secondary_deletes.h) that every
//    reader of its stripe sees as deleted is removed: dropped outright when a
//    horizon covers it (every older version is covered too, by the monotone
//    delete-key contract), otherwise turned into a point tombstone, which the
//    rule above drops when nothing older remains.
//  * With ZeroOldSequences (compactions): a value that every snapshot sees,
//    with no version of its key in a deeper level, under no range tombstone
//    of the input and older than every delete-key range record, is written
//    with sequence number 0. Nothing it is compared with can tell (every
//    other version of the key, tombstone and record is newer), and a page of
//    such values compresses better: the sequence numbers no longer differ.
//
// Thread-safety: one thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "format/internal_key.h"
#include "iterator/internal_iterator.h"
#include "format/range_tombstone.h"
#include "format/secondary_deletes.h"

namespace lethe {

struct OutputEntry {
  std::string ikey;
  std::string value;
  uint64_t delete_key;
};

struct CompactionStreamStats {
  uint64_t input_entries = 0;
  uint64_t dropped_entries = 0;
  uint64_t dropped_point_tombstones = 0;
  uint64_t dropped_range_tombstones = 0;
  uint64_t secondary_removed = 0;      // entries removed under secondary deletes
  uint64_t secondary_removed_bytes = 0;  // their key and value bytes
};

class CompactionStream {
 public:
  // `deeper_data(lo, hi)` tells whether a deeper level may hold keys in
  // [lo, hi] (inclusive); flushes pass a function that always says true.
  CompactionStream(InternalIterator* input, const std::vector<RangeTombstone>& tombstones,
                   std::vector<SequenceNumber> snapshots,
                   std::function<bool(std::string_view, std::string_view)> deeper_data,
                   const SecondaryDeletes* secondary = nullptr);

  // Turns on the sequence zeroing above; flushes leave it off.
  void ZeroOldSequences() { zero_old_sequences_ = true; }

  // Appends the surviving entries of the next sort key (newest first).
  // Returns false when the input is exhausted (or failed: see status()).
  bool NextKey(std::vector<OutputEntry>* out);
  Status status() const { return status_.ok() ? input_->status() : status_; }

  // The range tombstones to write, as disjoint fragments.
  std::vector<RangeTombstone> OutputTombstones();

  const CompactionStreamStats& stats() const { return stats_; }

 private:
  size_t Stripe(SequenceNumber seq) const;
  // Applies the secondary deletes to versions_ (see the class comment).
  void RemoveHidden(std::string_view key);
  // Whether a tombstone newer than seq, in the same stripe, covers key.
  bool Covered(std::string_view key, SequenceNumber seq, size_t stripe);
  // The input's range tombstone fragment holding key, or null; keys come
  // in ascending order.
  const FragmentedTombstones::Fragment* FragmentAt(std::string_view key);

  InternalIterator* input_;
  FragmentedTombstones fragments_;
  size_t fragment_cursor_ = 0;
  std::vector<SequenceNumber> snapshots_;  // ascending
  std::function<bool(std::string_view, std::string_view)> deeper_data_;
  const SecondaryDeletes* secondary_;
  bool zero_old_sequences_ = false;
  SequenceNumber oldest_range_record_;  // kMaxSequenceNumber without delete-key range records
  CompactionStreamStats stats_;
  Status status_;
  bool started_ = false;

  struct Version {
    SequenceNumber seq;
    EntryKind kind;
    std::string value;
    uint64_t delete_key;
  };
  std::vector<Version> versions_;  // the current key's versions, newest first
};

}  // namespace lethe
