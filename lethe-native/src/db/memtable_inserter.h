// MemTableInserter: applies a write batch to the column families'
// memtables, one sequence number per record. Used by writes and WAL replay.
// REQUIRES: the DB's write lock (or exclusive access during recovery).
#pragma once

#include <functional>
#include <map>
#include <memory>

#include "db/db_impl.h"

namespace lethe {

class MemTableInserter final : public WriteBatch::Handler {
 public:
  using ColumnFamilies = std::map<uint32_t, std::shared_ptr<ColumnFamilyData>>;
  MemTableInserter(ColumnFamilies* cfds, Clock* clock, SequenceNumber seq)
      : cfds_(cfds), clock_(clock), seq_(seq) {}
  // Bytes the memtables took from the allocator for the records inserted.
  uint64_t bytes() const { return bytes_; }
  // Bytes of keys and values handed in (the base of write amplification).
  uint64_t user_bytes() const { return user_bytes_; }

  Status Put(uint32_t cf, std::string_view key, std::string_view value, uint64_t dk) override {
    return Add(cf, EntryKind::kValue, key, value, dk);
  }
  Status Delete(uint32_t cf, std::string_view key, uint64_t dk) override {
    if (key_may_exist_) {
      ColumnFamilyData* cfd = Find(cf);
      if (cfd != nullptr && !key_may_exist_(cfd, key)) {
        blind_deletes_skipped_++;
        seq_++;
        return Status::OK();
      }
    }
    return Add(cf, EntryKind::kTombstone, key, {}, dk);
  }

  // Point deletes of keys for which this returns false are not written.
  void SkipBlindDeletes(std::function<bool(ColumnFamilyData*, std::string_view)> key_may_exist) {
    key_may_exist_ = std::move(key_may_exist);
  }
  uint64_t blind_deletes_skipped() const { return blind_deletes_skipped_; }
  Status Merge(uint32_t cf, std::string_view key, std::string_view value, uint64_t dk) override {
    return Add(cf, EntryKind::kMerge, key, value, dk);
  }
  Status DeleteRange(uint32_t cf, std::string_view begin, std::string_view end) override {
    if (ColumnFamilyData* cfd = Find(cf)) {
      const size_t before = cfd->mem->ApproximateMemoryUsage();
      cfd->mem->AddRangeTombstone(seq_, begin, end);
      NoteTombstone(cfd);
      bytes_ += cfd->mem->ApproximateMemoryUsage() - before;
      user_bytes_ += begin.size() + end.size();
    }
    seq_++;
    return Status::OK();
  }

 private:
  // A family dropped after the record was logged (WAL replay only): skipped.
  ColumnFamilyData* Find(uint32_t cf) {
    auto it = cfds_->find(cf);
    return it == cfds_->end() ? nullptr : it->second.get();
  }
  void NoteTombstone(ColumnFamilyData* cfd) {
    if (cfd->first_tombstone_time_us.load(std::memory_order_relaxed) == 0) {
      cfd->first_tombstone_time_us.store(clock_->NowMicros() | 1, std::memory_order_relaxed);
    }
  }
  Status Add(uint32_t cf, EntryKind kind, std::string_view key, std::string_view value, uint64_t dk) {
    if (ColumnFamilyData* cfd = Find(cf)) {
      // What the memtable took from the allocator: its arena grows by whole
      // blocks, so most entries add nothing and some a block.
      const size_t before = cfd->mem->ApproximateMemoryUsage();
      cfd->mem->Add(seq_, kind, key, value, dk);
      if (kind == EntryKind::kTombstone) NoteTombstone(cfd);
      bytes_ += cfd->mem->ApproximateMemoryUsage() - before;
      user_bytes_ += key.size() + value.size();
    }
    seq_++;
    return Status::OK();
  }

  ColumnFamilies* cfds_;
  Clock* clock_;
  SequenceNumber seq_;
  uint64_t bytes_ = 0;
  uint64_t user_bytes_ = 0;
  std::function<bool(ColumnFamilyData*, std::string_view)> key_may_exist_;
  uint64_t blind_deletes_skipped_ = 0;
};

}  // namespace lethe
