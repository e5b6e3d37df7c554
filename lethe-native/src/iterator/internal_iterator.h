// InternalIterator: iteration over internal entries (every version, every
// kind) of one source: a memtable, a page, a tile, a file, a level, or a merge
// of them. The user-facing Iterator (db_iter.h) is built on top.
//
// Call order as for lethe::Iterator; Seek and SeekForPrev take an internal
// key. An iterator may change direction at any entry.
#pragma once

#include <cstdint>
#include <string_view>

#include "lethe/status.h"

namespace lethe {

class InternalIterator {
 public:
  virtual ~InternalIterator() = default;
  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  virtual void Seek(std::string_view internal_key) = 0;  // the first entry >= internal_key
  virtual void Next() = 0;
  virtual void Prev() = 0;
  virtual std::string_view key() const = 0;  // internal key
  virtual std::string_view value() const = 0;
  virtual uint64_t delete_key() const = 0;
  virtual Status status() const = 0;

  // Positions at the last entry <= internal_key.
  void SeekForPrev(std::string_view internal_key);
};

// An iterator over nothing, possibly carrying an error.
class EmptyIterator final : public InternalIterator {
 public:
  explicit EmptyIterator(Status s = Status::OK()) : status_(std::move(s)) {}
  bool Valid() const override { return false; }
  void SeekToFirst() override {}
  void SeekToLast() override {}
  void Seek(std::string_view) override {}
  void Next() override {}
  void Prev() override {}
  std::string_view key() const override { return {}; }
  std::string_view value() const override { return {}; }
  uint64_t delete_key() const override { return 0; }
  Status status() const override { return status_; }

 private:
  Status status_;
};

}  // namespace lethe
