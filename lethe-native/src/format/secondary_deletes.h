// SecondaryDeletes: a column family's deletes by delete key (KiWi), kept
// in the Version and persisted in the manifest.
//
// Two kinds of record, each stamped with the sequence number it took:
//  * a horizon h: every value or merge operand whose delete key is < h is
//    gone, whenever it was written (horizons only grow);
//  * a delete-key range [lo, hi]: every value or merge operand written
//    before the record (smaller sequence number) whose delete key lies in
//    [lo, hi] is gone.
// kMaxDeleteKey means "never": no record covers it. Point tombstones are
// never covered.
//
// Read semantics: a read at sequence r treats a hidden entry exactly like a
// point tombstone at the entry's sequence. So the newest version of a key
// decides: if it is hidden, the key is absent (an older version never
// resurfaces), and flush and compaction may turn a hidden entry that no
// reader can see into a tombstone (or, under a horizon, drop it: by the
// monotone delete-key contract every older version is hidden too).
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "format/internal_key.h"
#include "lethe/options.h"
#include "lethe/status.h"

namespace lethe {

struct HorizonRecord {
  SequenceNumber seq = 0;
  uint64_t horizon = 0;  // delete keys < horizon are gone
  // When the records merged into this one became effective (the earliest):
  // FADE counts invalidation from here.
  uint64_t time_us = 0;
};

struct DeleteKeyRangeRecord {
  SequenceNumber seq = 0;
  uint64_t lo = 0, hi = 0;  // inclusive
  uint64_t time_us = 0;
};

// The fate of a stored entry under the records, the one rule that flush,
// compaction and page rewrites share:
//  * an entry that every reader able to see it sees as hidden is removed:
//    dropped when a horizon hides it (by the monotone delete-key contract
//    every older version of its key is hidden too), otherwise turned into a
//    point tombstone, which still shadows older versions a range does not
//    reach;
//  * a point tombstone with a delete key leaves under a horizon, together
//    with what it deletes (db.h); under a range it stays what it is;
//  * a point tombstone without a delete key (kMaxDeleteKey) always stays.
// `pinned`: a record hides the entry, but a snapshot older than that record
// still reads it, so it stays for now.
struct EntryFate {
  enum Action { kKeep, kDrop, kTombstone };
  Action action = kKeep;
  bool pinned = false;
};

struct SecondaryDeletes {
  std::vector<HorizonRecord> horizons;        // ascending sequence and horizon
  std::vector<DeleteKeyRangeRecord> ranges;   // ascending sequence

  bool empty() const { return horizons.empty() && ranges.empty(); }
  uint64_t horizon() const { return horizons.empty() ? 0 : horizons.back().horizon; }

  // The first read sequence at which the horizon hides delete key dk
  // (kMaxSequenceNumber if no horizon is above dk).
  SequenceNumber HorizonHiddenFrom(uint64_t dk) const {
    auto it = std::upper_bound(horizons.begin(), horizons.end(), dk,
                               [](uint64_t k, const HorizonRecord& r) { return k < r.horizon; });
    return it == horizons.end() ? kMaxSequenceNumber : it->seq;
  }
  // The first read sequence at which entry (seq, dk) is hidden, by either
  // kind of record; kMaxSequenceNumber if never.
  SequenceNumber HiddenFrom(SequenceNumber seq, uint64_t dk) const {
    SequenceNumber from = HorizonHiddenFrom(dk);
    for (const DeleteKeyRangeRecord& r : ranges) {
      if (r.seq >= from) break;
      if (seq < r.seq && r.lo <= dk && dk <= r.hi) {
        from = r.seq;
        break;
      }
    }
    return from;
  }
  // Whether a read at read_seq treats entry (seq, dk, kind) as deleted.
  bool Hides(SequenceNumber seq, EntryKind kind, uint64_t dk, SequenceNumber read_seq) const {
    if (kind == EntryKind::kTombstone || empty()) return false;
    const SequenceNumber from = HiddenFrom(seq, dk);
    return from != kMaxSequenceNumber && from <= read_seq;
  }
  // What a rewrite (flush, compaction, page rewrite) does with a stored
  // entry; see EntryFate. `first_reader`: the earliest read sequence that
  // can see the entry (the oldest snapshot at or above seq, or
  // kMaxSequenceNumber for the current state alone).
  EntryFate FateOf(SequenceNumber seq, EntryKind kind, uint64_t dk, SequenceNumber first_reader) const;

  // FADE: when entries of a file with the given sequence and delete-key
  // bounds first became invalid through a record newer than applied_seq
  // (records up to it were applied when the file was written); 0 if none.
  uint64_t InvalidationTime(SequenceNumber applied_seq, SequenceNumber smallest_seq,
                            uint64_t dk_min, uint64_t dk_max) const;
  // The newest record's sequence (0 without records).
  SequenceNumber LatestSequence() const {
    SequenceNumber s = horizons.empty() ? 0 : horizons.back().seq;
    return ranges.empty() ? s : std::max(s, ranges.back().seq);
  }

  void EncodeTo(std::string* dst) const;
  Status DecodeFrom(std::string_view input);
};

// Whether a live snapshot reads in [lo, hi): such a reader sees the state
// between two records, or an entry a record has hidden since.
inline bool AnySnapshotIn(const std::multiset<SequenceNumber>& snapshots, SequenceNumber lo, SequenceNumber hi) {
  auto it = snapshots.lower_bound(lo);
  return it != snapshots.end() && *it < hi;
}

}  // namespace lethe
