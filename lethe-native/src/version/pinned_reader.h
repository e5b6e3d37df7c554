// PinnedReader: the open reader of one table file, held by the file's
// record while the table cache keeps every table open (max_open_files < 0).
// A read then reaches the reader through the record it already holds,
// without the table cache's lock or a reference count shared with other
// threads. Copies of a record (a version edit copies records) share it.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

namespace lethe {

class TableReader;

class PinnedReader {
 public:
  PinnedReader() = default;
  PinnedReader(const PinnedReader& o) { CopyFrom(o); }
  PinnedReader& operator=(const PinnedReader& o) {
    if (this != &o) CopyFrom(o);
    return *this;
  }

  // The pinned reader, or null.
  const TableReader* get() const { return raw_.load(std::memory_order_acquire); }
  // The pinned reader shared, or null.
  std::shared_ptr<const TableReader> shared() const;
  // Pins r unless a reader is pinned already; returns the pinned one.
  const TableReader* Pin(std::shared_ptr<const TableReader> r) const;

 private:
  void CopyFrom(const PinnedReader& o);

  mutable std::mutex mu_;
  mutable std::shared_ptr<const TableReader> owner_;  // mu_
  mutable std::atomic<const TableReader*> raw_{nullptr};
};

}  // namespace lethe
