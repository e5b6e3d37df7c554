// VersionEdit: one change to the set of files, column families and counters,
// as recorded in the manifest (docs/formats.md, "Manifest"). A manifest is a
// record log of encoded edits; the first edit of a manifest is a full
// snapshot of the state.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lethe/options.h"
#include "lethe/status.h"
#include "version/file_metadata.h"
#include "format/secondary_deletes.h"

namespace lethe {

struct ColumnFamilyDescriptor {
  uint32_t id = 0;
  std::string name;
  ColumnFamilyOptions options;
};

class VersionEdit {
 public:
  // The oldest log whose writes are not all in tables yet. `names_wal`: a
  // WAL with this number was created (dir-synced) before the edit, so it
  // exists until a later edit moves the log number past it; false for the
  // placeholder numbers of a database without a WAL and of checkpoints.
  void SetLogNumber(uint64_t n, bool names_wal) {
    log_number_ = n;
    log_names_wal_ = names_wal;
  }
  // Edits are numbered 1, 2, ... over the database's life (a manifest's
  // snapshot carries the number of the last edit). The WAL records the
  // number of each edit made while it was current (DBImpl::LogAndApply).
  void SetEditNumber(uint64_t n) { edit_number_ = n; }
  void SetNextFileNumber(uint64_t n) { next_file_number_ = n; }
  void SetLastSequence(uint64_t s) { last_sequence_ = s; }
  void SetMaxColumnFamily(uint32_t id) { max_column_family_ = id; }
  void AddColumnFamily(ColumnFamilyDescriptor cf) { added_cfs_.push_back(std::move(cf)); }
  void DropColumnFamily(uint32_t id) { dropped_cfs_.push_back(id); }
  void AddFile(uint32_t cf, int level, const FileMetaData& f) {
    new_files_.push_back({cf, level, f});
  }
  void DeleteFile(uint32_t cf, int level, uint64_t number) {
    deleted_files_.push_back({cf, level, number});
  }

  // Replaces the family's secondary-delete records (horizons and delete-key
  // ranges) with `records`.
  void SetSecondaryDeletes(uint32_t cf, SecondaryDeletes records) {
    secondary_deletes_.emplace_back(cf, std::move(records));
  }

  void EncodeTo(std::string* dst) const;
  Status DecodeFrom(std::string_view input);

  struct NewFile {
    uint32_t cf;
    int level;
    FileMetaData meta;
  };
  struct DeletedFile {
    uint32_t cf;
    int level;
    uint64_t number;
  };
  std::optional<uint64_t> log_number_, next_file_number_, last_sequence_, edit_number_;
  bool log_names_wal_ = false;
  std::optional<uint32_t> max_column_family_;
  std::vector<ColumnFamilyDescriptor> added_cfs_;
  std::vector<uint32_t> dropped_cfs_;
  std::vector<NewFile> new_files_;
  std::vector<DeletedFile> deleted_files_;
  std::vector<std::pair<uint32_t, SecondaryDeletes>> secondary_deletes_;
};

void EncodeColumnFamilyOptions(const ColumnFamilyOptions& o, std::string* dst);
Status DecodeColumnFamilyOptions(std::string_view input, ColumnFamilyOptions* o);

}  // namespace lethe
