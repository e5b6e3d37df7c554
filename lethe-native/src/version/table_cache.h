// TableCache: open TableReaders by file number, bounded by max_open_files.
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
      : dbname_(std::move(dbname)), env_(env), cache_(static_cast<size_t>(max_open_files)),
        reader_options_(reader_options) {}

  Status FindTable(const FileMetaData& f, std::shared_ptr<const TableReader>* table);
  void Evict(uint64_t number) { cache_.Erase(CacheKey{number, 0}); }

 private:
  std::string dbname_;
  Env* env_;
  LruCache<const TableReader> cache_;  // charge 1 per table
  TableReader::Options reader_options_;
};

}  // namespace lethe
