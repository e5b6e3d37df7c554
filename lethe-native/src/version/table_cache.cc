#include "version/table_cache.h"

#include <cinttypes>
#include <cstdio>

namespace lethe {

std::string TableFileName(const std::string& dbname, uint64_t number) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "/%06" PRIu64 ".sst", number);
  return dbname + buf;
}

Status TableCache::Load(const FileMetaData& f, bool may_pin, TableOpen open,
                        std::shared_ptr<const TableReader>* table, bool* pinned) {
  const CacheKey key = Key(f.number);
  if ((*table = Cache()->Lookup(key)) != nullptr) {
    // On a shared budget, a cached table stays open for good once the
    // budget allows it; the cache then no longer charges it.
    *pinned = may_pin && (!budget_->shared() || budget_->Promote(*table));
    if (*pinned && budget_->shared()) Cache()->Insert(key, *table, 0);
    return Status::OK();
  }
  std::string fname = TableFileName(dbname_, f.number);
  if (open == TableOpen::kNever) return Status::NotFound(fname, "table not open");
  std::unique_ptr<RandomAccessFile> file;
  Status s = env_->NewRandomAccessFile(fname, &file);
  if (!s.ok()) return s;
  std::unique_ptr<TableReader> reader;
  s = TableReader::Open(reader_options_, fname, f.number, std::move(file), f.file_size, &reader);
  if (!s.ok()) return s;
  // Kept whole, an index spares every lookup a trip through the page cache.
  // In memory it costs about twice its bytes in the file, plus each page's
  // metadata, which a compact index (format 4) stores in a few bytes.
  const size_t whole_index = 2 * reader->PartitionBytes() + reader->properties().pages * sizeof(PageMeta);
  if (reader->PartitionBytes() > 0 && budget_->RoomForWholeIndex(whole_index)) {
    if (!(s = reader->KeepWholeIndex()).ok()) return s;
  }
  const size_t bytes = reader->MemoryUsage();
  // A fixed budget counts a table as pinned when this database pins every table.
  *table = budget_->Track(std::move(reader), budget_->shared() ? may_pin : pin_, pinned);
  if (!budget_->shared()) *pinned = may_pin && pin_;
  // Pinned tables stay findable (a later record of the same file shares
  // them) at no charge: the budget counts them as pinned.
  Cache()->Insert(key, *table, !budget_->shared() ? 1 : *pinned ? 0 : bytes);
  return Status::OK();
}

Status TableCache::FindTable(const FileMetaData& f, std::shared_ptr<const TableReader>* table, TableOpen open) {
  if (pin_ && (*table = f.reader.shared()) != nullptr) return Status::OK();
  // Pinned by the budget as a file's table would be; no record holds it, so
  // the cache keeps it (at no charge on a shared budget) until the file goes.
  bool pinned = false;
  return Load(f, pin_, open, table, &pinned);
}

Status TableCache::GetReader(const FileMetaData& f, const TableReader** reader,
                             std::shared_ptr<const TableReader>* owner, TableOpen open) {
  owner->reset();
  if (pin_ && (*reader = f.reader.get()) != nullptr) return Status::OK();
  std::shared_ptr<const TableReader> table;
  bool pinned = false;
  Status s = Load(f, pin_, open, &table, &pinned);
  if (!s.ok()) return s;
  if (pinned) {
    *reader = f.reader.Pin(std::move(table));
  } else {
    *reader = table.get();
    *owner = std::move(table);
  }
  return Status::OK();
}

}  // namespace lethe
