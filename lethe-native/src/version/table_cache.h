// TableCache: open TableReaders by file number, bounded by max_open_files;
// with max_open_files < 0 every table stays open, pinned to its file's record
// (pinned_reader.h), and reads skip the cache. On a shared memory budget
// (memory_budget.h) tables stay pinned only while the budget allows; the
// others live in the budget's table cache, bounded by bytes (pinned ones
// stay in it too, uncharged, so that later records of a file share them).
// Thread-safety: safe for concurrent use.
#pragma once

#include <memory>
#include <string>

#include "cache/lru_cache.h"
#include "lethe/env.h"
#include "sst/table_reader.h"
#include "version/file_metadata.h"
#include "version/memory_budget.h"

namespace lethe {

std::string TableFileName(const std::string& dbname, uint64_t number);

// Whether a lookup may open a table that is not open now (reading its whole
// index and filters), or answers NotFound instead.
enum class TableOpen { kIfNeeded, kNever };

class TableCache {
 public:
  // reader_options.cache_namespace names this database's files in shared caches.
  TableCache(std::string dbname, Env* env, int max_open_files, TableReader::Options reader_options,
             std::shared_ptr<MemoryBudgetImpl> budget)
      : dbname_(std::move(dbname)), env_(env), pin_(max_open_files < 0 || budget->shared()),
        own_(static_cast<size_t>(max_open_files < 0 ? kUnpinnedCapacity : std::max(16, max_open_files))),
        budget_(std::move(budget)), reader_options_(reader_options) {
    // Each open table keeps its whole index, unless a shared budget has no
    // room for it: then its index partitions live in the budget's page cache.
    reader_options_.pin_index = !budget_->shared();
  }
  ~TableCache() { budget_->ForgetNamespace(reader_options_.cache_namespace); }

  // The reader of f. *owner keeps it alive, or stays null when the reader is
  // pinned to f (f keeps it alive).
  Status GetReader(const FileMetaData& f, const TableReader** reader, std::shared_ptr<const TableReader>* owner,
                   TableOpen open = TableOpen::kIfNeeded);
  // The reader of file f.number, for a record made up on the spot (a patch
  // table's): never pinned to it, but kept open as f's table would be.
  Status FindTable(const FileMetaData& f, std::shared_ptr<const TableReader>* table,
                   TableOpen open = TableOpen::kIfNeeded);
  void Evict(uint64_t number) { Cache()->Erase(Key(number)); }

 private:
  // The reader of f from the cache, or opened (if `open` allows); *pinned:
  // whether to pin it.
  Status Load(const FileMetaData& f, bool may_pin, TableOpen open, std::shared_ptr<const TableReader>* table,
              bool* pinned);
  TableReaderCache* Cache() { return budget_->shared() ? budget_->table_readers() : &own_; }
  CacheKey Key(uint64_t number) const { return CacheKey{reader_options_.cache_namespace | number, 0}; }

  // Tables opened by number alone (patch tables) while every table stays open.
  static constexpr int kUnpinnedCapacity = 1000;

  std::string dbname_;
  Env* env_;
  const bool pin_;
  TableReaderCache own_;  // without a shared budget: charge 1 per table
  std::shared_ptr<MemoryBudgetImpl> budget_;
  TableReader::Options reader_options_;
};

}  // namespace lethe
