// VersionSet: the current Version, the manifest that makes it durable, and
// the counters that go with it (next file number, last sequence, WAL number).
//
// Files in a database directory:
//   CURRENT            name of the live manifest, then '\n'
//   MANIFEST-<n>       record log of VersionEdits (first one a full snapshot)
//   <n>.log            write-ahead log
//   <n>.sst            table files
//   LOCK               held while the database is open
//
// Thread-safety: external synchronization (the DB mutex) for every method.
#pragma once

#include <functional>
#include <list>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lethe/env.h"
#include "version/version.h"
#include "wal/log_writer.h"

namespace lethe {

std::string ManifestFileName(const std::string& dbname, uint64_t number);
std::string LogFileName(const std::string& dbname, uint64_t number);
std::string CurrentFileName(const std::string& dbname);
std::string LockFileName(const std::string& dbname);

enum class FileType { kTable, kLog, kManifest, kCurrent, kLock, kTemp, kUnknown };
// Parses a file name inside the database directory.
FileType ParseFileName(const std::string& name, uint64_t* number);

class VersionSet {
 public:
  // `clock` times how long old versions are held (GetHeldVersions).
  VersionSet(std::string dbname, Env* env, Clock* clock = Clock::Default())
      : dbname_(std::move(dbname)), env_(env), clock_(clock) {}

  // Creates the files of an empty database with a default column family.
  Status CreateNew(const ColumnFamilyOptions& default_cf_options);
  // Loads the state named by CURRENT.
  Status Recover();
  // Starts a new manifest holding a snapshot of the current state and points
  // CURRENT at it (done at every open, so manifests do not grow forever).
  Status RollManifest();

  // Applies the edit, makes it durable in the manifest and installs the
  // resulting version. On failure nothing changes.
  Status LogAndApply(VersionEdit* edit);
  // Whether a manifest append or sync failed. The failed edit may still be
  // durable (its bytes may have reached the file), so the files it adds must
  // not be deleted in this process.
  bool manifest_failed() const { return !manifest_error_.ok(); }

  VersionRef current() const { return current_; }
  uint64_t NewFileNumber() { return next_file_number_++; }
  uint64_t next_file_number() const { return next_file_number_; }
  void MarkFileNumberUsed(uint64_t n) {
    if (next_file_number_ <= n) next_file_number_ = n + 1;
  }
  uint64_t last_sequence() const { return last_sequence_; }
  void SetLastSequence(uint64_t s) { last_sequence_ = s; }
  uint64_t log_number() const { return log_number_; }
  // Whether log_number() names a WAL that must exist (VersionEdit::SetLogNumber).
  bool log_names_wal() const { return log_names_wal_; }
  // The number of the last edit made durable (0: none numbered yet).
  uint64_t edit_number() const { return edit_number_; }
  uint32_t NewColumnFamilyId() { return ++max_column_family_; }
  uint64_t manifest_number() const { return manifest_number_; }

  // Table files referenced by any version still in use (by readers too).
  void AddLiveFiles(std::set<uint64_t>* live);

  // Whether a version still in use has a record of table `number` that reads
  // one of `pages` from the file itself (neither dropped nor patched). Records
  // of one file differ by their page drops: a reader of an old version reads
  // pages that later versions dropped.
  bool AnyLiveRecordReads(uint64_t number, const std::vector<uint32_t>& pages);

  // The versions held besides the current one (by readers, checkpoints and
  // background work): how many, how long ago the oldest of them stopped being
  // current (0: none held), and the bytes of the table files only they keep
  // (obsolete files that cannot be deleted yet).
  struct HeldVersions {
    uint64_t count = 0;
    uint64_t oldest_age_us = 0;
    uint64_t obsolete_file_bytes = 0;
  };
  HeldVersions GetHeldVersions();

  // Encodes the full current state as one edit.
  void EncodeSnapshot(VersionEdit* edit) const;

 private:
  // Calls fn for each file record of each version still in use, until it
  // returns true; returns whether one did.
  bool AnyLiveFileRecord(const std::function<bool(const FileMetaData&)>& fn);
  // Drops the entries of versions no longer in use.
  void ForgetExpired();
  Status WriteManifest(uint64_t number, const VersionEdit& snapshot);
  void Install(std::shared_ptr<const Version> v);

  std::string dbname_;
  Env* env_;
  Clock* clock_;
  VersionRef current_ = std::make_shared<Version>();
  // Every version still maybe in use, with when it stopped being current (0:
  // it is current).
  struct Installed {
    std::weak_ptr<const Version> version;
    uint64_t replaced_us = 0;
  };
  std::list<Installed> versions_;
  std::unique_ptr<log::Writer> manifest_;
  Status manifest_error_;  // sticky: set when an append or sync failed
  uint64_t manifest_number_ = 0;
  uint64_t next_file_number_ = 2;
  uint64_t last_sequence_ = 0;
  uint64_t log_number_ = 0;
  bool log_names_wal_ = false;
  uint64_t edit_number_ = 0;
  uint32_t max_column_family_ = 0;
};

}  // namespace lethe
