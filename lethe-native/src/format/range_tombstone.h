// RangeTombstone: "every version of a sort key in [start, end) older than
// seq is deleted". Tombstones live in memtables and in each file's
// range-tombstone block; RangeTombstoneSet answers coverage queries over a
// collection of them (see fragmenter in range_tombstone.cc).
#pragma once

#include <memory>
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

  // The largest sequence number <= read_seq of a tombstone covering key, or 0;
  // if not 0, *end and *start (where not null) are where that fragment ends
  // and starts.
  SequenceNumber MaxCoveringSeq(std::string_view key, SequenceNumber read_seq, std::string_view* end = nullptr,
                                std::string_view* start = nullptr) const;
  // Index of the first fragment whose end > key (fragments.size() if none).
  // Searches a compact array of numbers (the 8 bytes of each end after the
  // prefix all ends share), comparing whole keys only where numbers tie.
  size_t FindFragment(std::string_view key) const;

 private:
  void IndexEnds();

  std::vector<Fragment> fragments_;
  std::string end_prefix_;           // common to every fragment's end
  std::vector<uint64_t> end_words_;  // per fragment: the 8 bytes of its end after end_prefix_
};

// The fragmented range tombstones of one source of a read: a memtable, a
// level-0 file, or the files of a deeper level (disjoint key ranges, in
// order). Holds the fragments it was given, so it outlives their readers.
class TombstoneSource {
 public:
  // Adds one memtable's or file's tombstones; a file's cover no key outside
  // [smallest, largest], and files are added in key order. Empty sets are
  // not kept.
  void Add(std::shared_ptr<const FragmentedTombstones> set, std::string_view smallest = {},
           std::string_view largest = {});
  bool empty() const { return parts_.empty(); }
  // As FragmentedTombstones::MaxCoveringSeq, over the source.
  SequenceNumber MaxCoveringSeq(std::string_view key, SequenceNumber read_seq, std::string_view* end = nullptr,
                                std::string_view* start = nullptr) const;

 private:
  friend class TombstoneCursor;
  struct Part {
    std::shared_ptr<const FragmentedTombstones> set;
    std::string smallest, largest;  // both empty: unbounded (a memtable)
  };
  // The part that may cover key (parts_.size() if none).
  size_t FindPart(std::string_view key) const;
  std::vector<Part> parts_;
};

// Answers MaxCoveringSeq for keys that only grow (an iterator's, between
// seeks) by walking the source's fragments forwards instead of searching
// each time. Reset() after a seek.
class TombstoneCursor {
 public:
  explicit TombstoneCursor(const TombstoneSource* source) : source_(source) {}
  void Reset() {
    positioned_ = false;
    before_next_ = false;
    to_end_ = false;
  }
  SequenceNumber MaxCoveringSeq(std::string_view key, SequenceNumber read_seq, std::string_view* end = nullptr) {
    // The common cases, inline and at most one comparison: no fragment lies
    // ahead, or key is still before the fragment the cursor is at (so before
    // every fragment after it, and past those before).
    if (to_end_ || (before_next_ && key < next_start_)) return 0;
    return Locate(key, read_seq, end);
  }
  // After MaxCoveringSeq(key): whether the cursor knows that no tombstone of
  // the source covers a key after key and before *bound, or (*to_end) after
  // key at all. A bound at or before key vouches for nothing.
  bool ClearBefore(std::string_view* bound, bool* to_end) const {
    *to_end = to_end_;
    *bound = next_start_;
    return to_end_ || before_next_;
  }

 private:
  SequenceNumber Locate(std::string_view key, SequenceNumber read_seq, std::string_view* end);

  const TombstoneSource* source_;
  bool positioned_ = false;
  size_t part_ = 0, fragment_ = 0;
  // next_start_ is the start of the fragment the cursor is at, or, past the
  // last fragment of a file that is not the source's last, that file's largest key
  bool before_next_ = false;
  std::string_view next_start_;  // points into the source
  bool to_end_ = false;          // no fragment after the last key looked up
};

}  // namespace lethe
