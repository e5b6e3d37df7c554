#include "compaction/table_writer.h"

#include <algorithm>

#include "format/internal_key.h"
#include "sst/table_builder.h"
#include "version/table_cache.h"
#include "util/kill_point.h"

namespace lethe {
namespace {

class OutputFile {
 public:
  Status Open(const TableWriterOptions& options) {
    meta_.number = options.new_file_number();
    meta_.created_time_us = options.now_us;
    fname_ = TableFileName(options.dbname, meta_.number);
    Status s = options.env->NewWritableFile(fname_, &file_);
    if (!s.ok()) return s;
    TableBuilderOptions bo;
    bo.page_size = options.cf_options.page_size;
    bo.pages_per_tile = options.cf_options.pages_per_tile;
    bo.bloom_bits_per_key = options.cf_options.bloom_bits_per_key;
    bo.index_partition_size = options.cf_options.index_partition_size;
    bo.compression = OutputCompression(options.cf_options, options.bottommost, options.flush);
    builder_ = std::make_unique<TableBuilder>(bo, file_.get());
    return Status::OK();
  }

  void Add(const OutputEntry& e) {
    std::string_view sk = ExtractSortKey(e.ikey);
    if (!has_points_) first_key_.assign(sk);
    last_key_.assign(sk);
    has_points_ = true;
    if (TagKind(ExtractTag(e.ikey)) == EntryKind::kTombstone) {
      tombstone_delete_key_max_ = std::max(tombstone_delete_key_max_, e.delete_key);
    }
    builder_->Add(e.ikey, e.value, e.delete_key);
  }
  uint64_t EstimatedSize() const { return builder_->EstimatedSize(); }
  bool has_points() const { return has_points_; }
  const std::string& last_key() const { return last_key_; }

  // Adds the tombstones clipped to [lo, hi) ("" = unbounded), then finishes.
  Status Finish(const TableWriterOptions& options, const std::vector<RangeTombstone>& tombstones,
                const std::string* lo, const std::string* hi, FileMetaData* out) {
    bool have_bounds = has_points_;
    std::string smallest = first_key_, largest = last_key_;
    uint64_t range_invalidated = 0;
    for (const RangeTombstone& t : tombstones) {
      std::string start = t.start, end = t.end;
      if (lo != nullptr && start < *lo) start = *lo;
      if (hi != nullptr && *hi < end) end = *hi;
      if (!(start < end)) continue;
      if (options.estimate_covered) range_invalidated += options.estimate_covered(start, end);
      builder_->AddRangeTombstone(RangeTombstone{start, end, t.seq});
      if (!have_bounds || start < smallest) smallest = start;
      std::string inclusive_end = InclusiveBoundOf(end);
      if (!have_bounds || largest < inclusive_end) largest = inclusive_end;
      have_bounds = true;
    }
    Status s = builder_->Finish();
    if (s.ok() && options.sync) s = file_->Sync();
    if (s.ok()) s = file_->Close();
    if (!s.ok()) return s;
    const TableProperties& p = builder_->properties();
    meta_.file_size = builder_->FileSize();
    meta_.smallest = std::move(smallest);
    meta_.largest = std::move(largest);
    meta_.smallest_seq = p.smallest_seq == UINT64_MAX ? 0 : p.smallest_seq;
    meta_.largest_seq = p.largest_seq;
    meta_.SetCounts(p);
    meta_.delete_key_min = p.delete_key_min;
    meta_.delete_key_max = p.delete_key_max;
    meta_.tombstone_delete_key_max = p.range_tombstones > 0 ? kMaxDeleteKey : tombstone_delete_key_max_;
    if (p.point_tombstones + p.range_tombstones > 0) {
      meta_.oldest_tombstone_time_us = options.oldest_tombstone_time
                                           ? options.oldest_tombstone_time(meta_.smallest, meta_.largest)
                                           : options.oldest_tombstone_time_us;
      // A file can hold tombstones that outlive every input time (none known).
      if (meta_.oldest_tombstone_time_us == 0) meta_.oldest_tombstone_time_us = options.now_us | 1;
    }
    meta_.estimated_invalidated = p.point_tombstones + range_invalidated;
    meta_.secondary_applied_seq = options.secondary_applied_seq;
    *out = meta_;
    return Status::OK();
  }

  void Abandon(Env* env) {
    builder_->Abandon();
    file_->Close();
    env->RemoveFile(fname_);
  }

 private:
  FileMetaData meta_;
  std::string fname_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<TableBuilder> builder_;
  bool has_points_ = false;
  uint64_t tombstone_delete_key_max_ = 0;
  std::string first_key_, last_key_;
};

}  // namespace

Compression OutputCompression(const ColumnFamilyOptions& cf, bool bottommost, bool flush) {
  if (bottommost && cf.bottommost_compression) return *cf.bottommost_compression;
  if (flush && cf.flush_compression) return *cf.flush_compression;
  return cf.compression;
}

Status WriteTables(const TableWriterOptions& options, CompactionStream* stream,
                   TableWriterResult* result) {
  // The surviving tombstones depend only on the input tombstones, snapshots
  // and deeper levels, so they are known before the first point entry.
  const std::vector<RangeTombstone> tombstones = stream->OutputTombstones();
  std::unique_ptr<OutputFile> out;
  std::string lo;  // lower clip bound of the current file
  bool have_lo = false;
  std::vector<OutputEntry> entries;
  Status s;

  auto finish = [&](const std::string* hi) {
    FileMetaData meta;
    s = out->Finish(options, tombstones, have_lo ? &lo : nullptr, hi, &meta);
    if (s.ok()) {
      result->bytes_written += meta.file_size;
      result->files.push_back(std::move(meta));
      KillPoint("table.finished");
    } else {
      out->Abandon(options.env);
    }
    out.reset();
  };

  while (s.ok()) {
    if (options.should_stop && options.should_stop()) {
      s = Status::Aborted("compaction stopped by shutdown");
      break;
    }
    entries.clear();
    if (!stream->NextKey(&entries)) break;
    if (entries.empty()) continue;
    if (out != nullptr && out->EstimatedSize() >= options.max_file_bytes) {
      std::string hi = SortKeySuccessor(out->last_key());
      finish(&hi);
      lo = std::move(hi);
      have_lo = true;
      if (!s.ok()) break;
    }
    if (out == nullptr) {
      out = std::make_unique<OutputFile>();
      if (!(s = out->Open(options)).ok()) {
        out.reset();
        break;
      }
    }
    for (const OutputEntry& e : entries) out->Add(e);
  }
  if (s.ok()) s = stream->status();
  if (s.ok() && out == nullptr && !tombstones.empty()) {
    // Only tombstones survive past the last cut (or at all): they still need a file.
    bool any_left = !have_lo;
    for (const RangeTombstone& t : tombstones) any_left = any_left || lo < t.end;
    if (any_left) {
      out = std::make_unique<OutputFile>();
      s = out->Open(options);
      if (!s.ok()) out.reset();
    }
  }
  if (out != nullptr) {
    if (s.ok()) {
      finish(nullptr);
    } else {
      out->Abandon(options.env);
    }
  }
  if (!s.ok()) {
    for (const FileMetaData& m : result->files) {
      options.env->RemoveFile(TableFileName(options.dbname, m.number));
    }
    result->files.clear();
  }
  return s;
}

}  // namespace lethe
