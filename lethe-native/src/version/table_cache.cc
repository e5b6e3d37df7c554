#include "version/table_cache.h"

#include <cinttypes>
#include <cstdio>

namespace lethe {

std::string TableFileName(const std::string& dbname, uint64_t number) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "/%06" PRIu64 ".sst", number);
  return dbname + buf;
}

Status TableCache::FindTable(const FileMetaData& f, std::shared_ptr<const TableReader>* table) {
  CacheKey key{f.number, 0};
  if ((*table = cache_.Lookup(key)) != nullptr) return Status::OK();
  std::string fname = TableFileName(dbname_, f.number);
  std::unique_ptr<RandomAccessFile> file;
  Status s = env_->NewRandomAccessFile(fname, &file);
  if (!s.ok()) return s;
  std::unique_ptr<TableReader> reader;
  s = TableReader::Open(reader_options_, fname, f.number, std::move(file), f.file_size, &reader);
  if (!s.ok()) return s;
  std::shared_ptr<const TableReader> shared(std::move(reader));
  cache_.Insert(key, shared, 1);
  *table = std::move(shared);
  return Status::OK();
}

Status TableCache::GetReader(const FileMetaData& f, const TableReader** reader,
                             std::shared_ptr<const TableReader>* owner) {
  owner->reset();
  if (pin_ && (*reader = f.reader.get()) != nullptr) return Status::OK();
  std::shared_ptr<const TableReader> table;
  Status s = FindTable(f, &table);
  if (!s.ok()) return s;
  if (pin_) {
    *reader = f.reader.Pin(std::move(table));
  } else {
    *reader = table.get();
    *owner = std::move(table);
  }
  return Status::OK();
}

}  // namespace lethe
