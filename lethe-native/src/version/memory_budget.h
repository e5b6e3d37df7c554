// MemoryBudgetImpl: the engine side of a MemoryBudget (lethe/memory_budget.h).
// A database without a budget gets a fixed one of its own: its page cache
// of page_cache_bytes, nothing squeezed, write buffers left to the
// database's write_buffer_size; the same counters then feed its statistics.
//
// Write buffers: each database registers a WriteBufferShare and charges what
// it writes to its memtable, until that memtable is destroyed (a flushed one
// that a reader still holds takes its memory). On a shared budget, once the
// mutable memtables take more than 7/8 of the write-buffer limit, or
// everything charged exceeds the limit while mutable memtables hold at least
// half of it, the share with the largest mutable memtable is asked to flush
// (its wake function runs, and flush_requested() turns true until it
// switches).
//
// Lock order: a database's mutex before the budget's; the budget's is never
// held while a wake function runs.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "cache/lru_cache.h"
#include "lethe/memory_budget.h"
#include "sst/table_reader.h"

namespace lethe {

// Few shards: a shard's share of the capacity must hold whole table readers.
using TableReaderCache = LruCache<const TableReader, 4>;

class MemoryBudgetImpl;

class WriteBufferShare {
 public:
  ~WriteBufferShare() { Close(); }
  // Gives back what is charged; the wake function never runs after this
  // returns. The database calls it before it goes.
  void Close();
  // Bytes written to the mutable memtable.
  void Charge(size_t bytes);
  // The mutable memtable became immutable (its flush is on its way), with
  // `uncharged` bytes written to it not charged yet.
  void Switched(size_t uncharged);
  // The immutable memtable was flushed and let go; the database keeps
  // `resident` bytes of memtables compacted in memory. What the memtables
  // that went into the flush were charged stays counted until the returned
  // token is destroyed: the database hands it to those memtables, which
  // readers (an iterator, a checkpoint's copy) may keep alive long after.
  // Null once the share is closed.
  [[nodiscard]] std::shared_ptr<void> Flushed(size_t resident = 0);
  // Whether the budget asked for the mutable memtable to be flushed.
  bool flush_requested() const { return requested_.load(std::memory_order_acquire); }

 private:
  friend class MemoryBudgetImpl;
  std::shared_ptr<MemoryBudgetImpl> budget_;
  std::function<void()> wake_;  // wake_mu_
  std::mutex wake_mu_;
  bool closed_ = false;  // wake_mu_
  // The budget's mutex guards these; requested_ is also read without it.
  size_t active_ = 0, immutable_ = 0;  // immutable_ includes resident_
  size_t resident_ = 0;
  bool gone_ = false;  // unregistered: charges no longer count
  std::atomic<bool> requested_{false};
};

class MemoryBudgetImpl final : public MemoryBudget, public std::enable_shared_from_this<MemoryBudgetImpl> {
 public:
  static std::shared_ptr<MemoryBudgetImpl> Shared(size_t capacity, double write_buffer_ratio, bool bound_readers);
  // One database's own page cache (0: none).
  static std::shared_ptr<MemoryBudgetImpl> Fixed(size_t page_cache_bytes);

  bool shared() const { return shared_; }
  PageCache* page_cache() { return pages_.get(); }  // null if none
  // The bounded table cache of a shared budget (null when fixed).
  TableReaderCache* table_readers() { return readers_.get(); }
  // A key space of its own for one database's files: CacheKey::hi is this
  // or'ed with a file number (below 2^40).
  uint64_t NewCacheNamespace() { return shared_ ? (next_namespace_.fetch_add(1) << 40) : 0; }
  // Lets go of the pages and tables of a database that closes.
  void ForgetNamespace(uint64_t ns);

  // Counts r's memory for as long as the returned reader lives. *pinned
  // says whether r may stay open for good: on a shared budget while pinned
  // readers take at most their share (unlimited unless readers are bound),
  // on a fixed one if want_pin.
  std::shared_ptr<const TableReader> Track(std::unique_ptr<TableReader> r, bool want_pin, bool* pinned);
  // Whether a tracked reader that was not pinned may now stay open for
  // good (it is then counted as pinned).
  bool Promote(const std::shared_ptr<const TableReader>& r);
  // Whether a table opening now may keep its whole index (about `bytes`) in
  // memory: on a shared budget while the readers kept open for good take at
  // most three quarters of what the write buffers leave, so that pages keep
  // a quarter (tables opened at the same time may pass that by their own
  // indexes); on a fixed budget always.
  bool RoomForWholeIndex(size_t bytes) const;

  // Bytes the memtables that `w`'s database compacts in memory may keep:
  // on a shared budget a quarter of the write-buffer limit less what the
  // others keep; unbounded on a fixed one (the database's write buffer
  // bounds it).
  size_t ResidentRoom(const WriteBufferShare& w) const;
  // Whether the write buffers not flushed yet exceed their share (shared
  // budgets): waiting for a flush cannot free flushed ones that readers hold.
  bool WriteBuffersOverLimit() const {
    std::lock_guard<std::mutex> l(mu_);
    return shared_ && write_buffers_ - flushed_held_ > write_buffer_limit_;
  }
  // Whether the page cache gave up at least a sixteenth of the capacity (at
  // least 1 MiB) since the last HeapTrimmed() to write buffers and table
  // readers that grew: freed pages stay with the allocator, while memtables
  // map fresh memory of their own, so the process holds both until the heap
  // is trimmed. Shared budgets only.
  bool SqueezedEnoughToTrim() const;
  // The heap was trimmed: what the page cache gave up went back.
  void HeapTrimmed() { squeezed_.store(0, std::memory_order_relaxed); }
  // wake runs (on a writer's thread) when the budget asks for a flush.
  std::shared_ptr<WriteBufferShare> NewWriteBufferShare(std::function<void()> wake);

  Usage GetUsage() const override;

 private:
  friend class WriteBufferShare;
  MemoryBudgetImpl(bool shared, size_t capacity, size_t write_buffer_limit, bool bound_readers);
  void Charge(WriteBufferShare* w, size_t bytes);
  void Switched(WriteBufferShare* w, size_t uncharged);
  std::shared_ptr<void> Flushed(WriteBufferShare* w, size_t resident);
  // Flushed memtables of `bytes` were destroyed.
  void Freed(size_t bytes);
  void Unregister(WriteBufferShare* w);
  void Wake(const std::shared_ptr<WriteBufferShare>& w);
  // Deletes a tracked reader and gives its memory back.
  struct ReaderCharge {
    std::shared_ptr<MemoryBudgetImpl> budget;
    size_t bytes;
    bool pinned;  // budget->mu_
    void operator()(const TableReader* r);
  };
  void SetReadersReserved();
  // The share to flush, if the rule in the file comment calls for one. mu_
  std::shared_ptr<WriteBufferShare> PickFlushLocked();
  // The page cache gives up what write buffers and readers hold. mu_
  void ReserveLocked();

  const bool shared_;
  const size_t capacity_, write_buffer_limit_, pinned_limit_;
  const size_t whole_index_limit_;  // shared: pinned readers' bytes up to which tables keep their whole index
  std::unique_ptr<PageCache> pages_;
  std::unique_ptr<TableReaderCache> readers_;
  std::atomic<uint64_t> next_namespace_{1};

  mutable std::mutex mu_;
  struct ShareRef {
    WriteBufferShare* share;
    std::weak_ptr<WriteBufferShare> owner;
  };
  std::vector<ShareRef> shares_;
  size_t write_buffers_ = 0;  // charged, mutable, immutable and flushed but held
  size_t flushed_held_ = 0;   // the part of write_buffers_ flushed, not yet destroyed
  size_t mutable_unrequested_ = 0;  // mutable memtables not asked to flush
  size_t table_readers_ = 0;
  std::atomic<size_t> pinned_{0};  // changed under mu_
  size_t reserved_ = 0;  // last reservation given to the page cache
  std::atomic<size_t> squeezed_{0};  // page bytes evicted by reservations since the last heap trim
};

}  // namespace lethe
