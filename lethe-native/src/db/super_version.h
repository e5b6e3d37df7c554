// SuperVersion: what a reader of one column family needs (memtables, files,
// the version keeping those files alive), immutable once published; and
// SuperVersionCache, which hands the current one to readers without a lock
// they share.
//
// Each thread that reads a family keeps the super version it used last in a
// slot of its own, with the number it was published under. A read swaps the
// slot to "in use", checks the number against the family's, and swaps the
// super version back when done: no mutex and no reference count that other
// threads touch, as long as nothing new was published. Publishing takes back
// every idle slot's copy at once, so a thread that stopped reading never
// keeps old files (or dropped pages) alive; a slot in use at that moment is
// given up by its reader when the read ends.
//
// Thread-safety: Acquire/Release from any thread; Install from one thread at
// a time (the caller holds the database mutex).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "memtable/memtable.h"
#include "version/version_set.h"

namespace lethe {

struct SuperVersion {
  std::shared_ptr<MemTable> mem;
  std::shared_ptr<MemTable> imm;  // being flushed, or null
  // What a compaction in memory kept of earlier memtables (older than imm,
  // newer than every file), or null.
  std::shared_ptr<MemTable> resident;
  std::shared_ptr<const ColumnFamilyFiles> files;
  VersionRef version;  // keeps `files` in the live set

  // The memtables, newest first; absent ones are null.
  std::array<const MemTable*, 3> memtables() const { return {mem.get(), imm.get(), resident.get()}; }
};

class SuperVersionCache {
 public:
  struct Slot;
  struct Ref;
  // A super version on loan to the calling thread until the lease ends.
  class Lease {
   public:
    Lease(SuperVersionCache* cache, Slot* slot, Ref* ref) : cache_(cache), slot_(slot), ref_(ref) {}
    ~Lease() {
      if (ref_ != nullptr) cache_->Release(slot_, ref_);
    }
    Lease(Lease&& other) noexcept : cache_(other.cache_), slot_(other.slot_), ref_(other.ref_) { other.ref_ = nullptr; }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    // Null once the family was dropped.
    const SuperVersion* get() const;
    const SuperVersion* operator->() const { return get(); }
    // A counted reference, for what outlives the read (iterators).
    std::shared_ptr<const SuperVersion> Share() const;

   private:
    friend class SuperVersionCache;
    SuperVersionCache* cache_;
    Slot* slot_;  // null: not cached (a nested read on the same thread)
    Ref* ref_;
  };

  SuperVersionCache();
  ~SuperVersionCache();
  SuperVersionCache(const SuperVersionCache&) = delete;
  SuperVersionCache& operator=(const SuperVersionCache&) = delete;

  // Publishes sv; readers that start after this returns see it.
  void Install(std::shared_ptr<const SuperVersion> sv);
  // Drops the published super version and every cached copy (a dropped family).
  void Clear();

  // The current super version (null after Clear), counting the point and
  // range lookups of the read on the thread's own counters.
  Lease Acquire(uint64_t point_lookups, uint64_t range_lookups);
  // The same, and in *seq what `sequence` held while that super version was
  // still the current one: loaded after taking it, and taken again if a newer
  // one was published meanwhile.
  Lease Acquire(uint64_t point_lookups, uint64_t range_lookups, const std::atomic<uint64_t>& sequence,
                uint64_t* seq);

  // Lookups counted over all threads so far.
  uint64_t PointLookups() const;
  uint64_t RangeLookups() const;

 private:
  Slot* ThisThreadSlot();
  Ref* Fetch();
  void Release(Slot* slot, Ref* ref);
  void Scrape();

  const uint64_t id_;  // never reused: threads find their slot by it
  std::atomic<uint64_t> number_{0};
  std::mutex current_mu_;
  std::shared_ptr<const SuperVersion> current_;  // current_mu_
  mutable std::mutex slots_mu_;
  std::vector<std::unique_ptr<Slot>> slots_;  // slots_mu_; one per thread that read
};

}  // namespace lethe
