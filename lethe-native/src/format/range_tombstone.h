// RangeTombstone: "every version of a sort key in [start, end) older than
// seq is deleted". Tombstones live in memtables and in each file's
// range-tombstone block; RangeTombstoneSet answers coverage queries over a
// collection of them (see fragmenter in range_tombstone.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "format/internal_key.h"

namespace lethe {

struct RangeTombstone {
  std::string start;  // inclusive
  std::string end;    // exclusive
  SequenceNumber seq = 0;
};

// A set of tombstones cut into disjoint fragments, each carrying the
// sequence numbers of the tombstones that cover it (newest first).
// Immutable after construction; thread-safe for concurrent readers.
class FragmentedTombstones {
 public:
  struct Fragment {
    std::string start, end;
    std::vector<SequenceNumber> seqs;  // descending
  };

  FragmentedTombstones() = default;
  explicit FragmentedTombstones(const std::vector<RangeTombstone>& tombstones);

  bool empty() const { return fragments_.empty(); }
  const std::vector<Fragment>& fragments() const { return fragments_; }

  // The largest sequence number <= read_seq of a tombstone covering key, or 0.
  SequenceNumber MaxCoveringSeq(std::string_view key, SequenceNumber read_seq) const;
  // Index of the first fragment whose end > key (fragments.size() if none).
  size_t FindFragment(std::string_view key) const;

 private:
  std::vector<Fragment> fragments_;
};

}  // namespace lethe
