// Iterator: iteration over the live entries of one column family as of a
// snapshot, in sort-key order forwards or backwards, within optional bounds.
//
// Call order: (SeekToFirst | SeekToLast | Seek | SeekForPrev) (Valid
// (Next | Prev)*)*; the direction may change at any entry. key(), value() and
// delete_key() REQUIRE Valid(). The views returned by key() and value() stay
// valid until the next positioning call. Moving backwards costs more than
// forwards: a step back within a page decodes from its restart point, and a
// step back in a memtable searches from the head.
//
// Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <string_view>

#include "lethe/status.h"

namespace lethe {

class Iterator {
 public:
  virtual ~Iterator() = default;
  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  // Positions at the last key (below the upper bound).
  virtual void SeekToLast() = 0;
  // Positions at the first key >= target (and >= the lower bound).
  virtual void Seek(std::string_view target) = 0;
  // Positions at the last key <= target (and below the upper bound).
  virtual void SeekForPrev(std::string_view target) = 0;
  virtual void Next() = 0;
  virtual void Prev() = 0;
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  virtual uint64_t delete_key() const = 0;
  // Not OK if iteration stopped because of an error (then Valid() is false).
  virtual Status status() const = 0;
};

}  // namespace lethe
