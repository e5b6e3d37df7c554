// TableCache: open TableReaders by file number, bounded by max_open_files;
// with max_open_files < 0 every table stays open, pinned to its file's record
// (pinned_reader.h), and reads skip the cache.
// Thread-safety: safe for concurrent use.
#pragma once

#include <memory>
#include <string>

#include "cache/lru_cache.h"
#include "lethe/env.h"
#include "sst/table_reader.h"
#include "version/file_metadata.h"

namespace lethe {

std::string TableFileName(const std::string& dbname, uint64_t number);

class TableCache {
 public:
  TableCache(std::string dbname, Env* env, int max_open_files, TableReader::Options reader_options)
      : dbname_(std::move(dbname)), env_(env), pin_(max_open_files < 0),
        cache_(static_cast<size_t>(max_open_files < 0 ? kUnpinnedCapacity : std::max(16, max_open_files))),
        reader_options_(reader_options) {}

  // The reader of f. *owner keeps it alive, or stays null when the reader is
  // pinned to f (f keeps it alive).
  Status GetReader(const FileMetaData& f, const TableReader** reader, std::shared_ptr<const TableReader>* owner);
  // The reader of file f.number, never pinned (for a record made up on the spot).
  Status FindTable(const FileMetaData& f, std::shared_ptr<const TableReader>* table);
  void Evict(uint64_t number) { cache_.Erase(CacheKey{number, 0}); }

 private:
  // Tables opened by number alone (patch tables) while every table stays open.
  static constexpr int kUnpinnedCapacity = 1000;

  std::string dbname_;
  Env* env_;
  const bool pin_;
  LruCache<const TableReader> cache_;  // charge 1 per table
  TableReader::Options reader_options_;
};

}  // namespace lethe
