// MemoryBudget: one memory budget for several databases, for example every
// engine of one Flink slot. Each database opened with the same budget
// (Options::memory_budget) shares it, and everything below counts against
// its one capacity:
// - write buffers: all memtables together take at most write_buffer_ratio
//   of the capacity; past that, the database with the largest memtable
//   flushes it (each database's own write_buffer_size still applies). A
//   memtable counts until it is destroyed: one that was flushed while an
//   iterator or a checkpoint's copy still reads it keeps its memory;
// - open tables' index, filters and range tombstones, in full. By default
//   every table stays open for good (pinned, read without a lock): their
//   memory is counted, squeezes the page cache, and may take the budget past
//   its capacity when it exceeds what write buffers and the page cache's
//   floor leave. With bound_table_readers, tables stay pinned only while
//   they take at most half of what the write buffers leave; later ones go
//   through a table cache of three quarters of it, bounded by bytes. That
//   bound is strict, but a table that left the cache is opened again (its
//   whole index and filters read) on its next use;
// - the page cache gets the rest, at least an eighth of the capacity: its
//   capacity shrinks by what the write buffers and open tables hold.
// The per-database sizes (write_buffer_size, page_cache_bytes) apply only to
// a database without a budget.
//
// Thread-safety: safe for concurrent use. A database keeps its budget alive.
#pragma once

#include <cstddef>
#include <memory>

#include "lethe/status.h"

namespace lethe {

class MemoryBudget {
 public:
  struct Usage {
    size_t capacity = 0;
    size_t write_buffers = 0;       // memtables of every database, flushed or not yet
    size_t flushed_write_buffers = 0;  // of those, flushed ones that readers still hold
    size_t table_readers = 0;       // open tables' index, filters and tombstones
    size_t pinned_table_readers = 0;  // the part of table_readers kept open for good
    size_t page_cache = 0;          // decoded pages held
  };

  // capacity_bytes at least 64 KiB; write_buffer_ratio in (0, 1).
  static Status New(size_t capacity_bytes, double write_buffer_ratio, std::shared_ptr<MemoryBudget>* result,
                    bool bound_table_readers = false);

  virtual ~MemoryBudget() = default;
  virtual Usage GetUsage() const = 0;
};

}  // namespace lethe
