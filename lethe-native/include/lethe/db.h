// DB: an embedded, persistent key-value store organized as one LSM tree per
// column family, files in the KiWi layout (docs/architecture.md).
//
// An entry is (sort key, value, delete key). The sort key orders the entries;
// the delete key is a 64-bit number (usually a time in milliseconds) that
// later drives secondary range deletes; kMaxDeleteKey means "never".
//
// Contract on delete keys (monotone): a newer version of a key never carries
// a smaller delete key than an older version of the same key.
//
// Thread-safety: a DB is safe for concurrent use by many threads. Handles
// (column families, snapshots) belong to the DB that made them and must not
// be used after the DB is closed or the handle released/dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lethe/iterator.h"
#include "lethe/options.h"
#include "lethe/statistics.h"
#include "lethe/status.h"
#include "lethe/write_batch.h"

namespace lethe {

// Names a column family. Owned by the DB; valid until the family is dropped
// (then only id() and name() may be used) or the DB is closed.
class ColumnFamilyHandle {
 public:
  virtual ~ColumnFamilyHandle() = default;
  virtual uint32_t id() const = 0;
  virtual const std::string& name() const = 0;
};

// A consistent point-in-time view, named by a sequence number.
class Snapshot {
 public:
  virtual uint64_t sequence() const = 0;

 protected:
  virtual ~Snapshot() = default;
};

// A copy of a database begun by DB::BeginCheckpoint.
class PendingCheckpoint {
 public:
  virtual ~PendingCheckpoint() = default;
  // The images of memtables it took: one per column family whose memtables
  // held data when it began.
  virtual size_t ImageCount() const = 0;
  // Writes image i (below ImageCount()) into the copy's directory as level-0
  // table files, and appends their names (relative to the directory) to
  // `files`, which may be null. Images are independent: distinct ones may be
  // written at once from different threads, so that a caller can move each
  // copy away as soon as it is written while others are. Each at most once,
  // and all before Finish.
  virtual Status WriteImage(size_t i, std::vector<std::string>* files) = 0;
  // Writes the images not written yet and the manifest; the copy is
  // complete and durable when this returns OK. At most once.
  virtual Status Finish() = 0;
};

// How DB::BeginCheckpoint makes a copy.
struct CheckpointOptions {
  // Whether Finish makes the copy durable (syncs its files and directory).
  // Off for a copy that is read once and then removed, a staging area for an
  // upload: what Finish writes then may never reach the device.
  bool sync = true;
  // Flush the memtables first, so that the copy holds none of them: the
  // synchronous part of a checkpoint then costs a flush, and its
  // asynchronous part writes nothing (RocksDB's checkpoints work this way).
  bool flush_first = false;
};

// One file of a live-file listing (relative name inside the DB directory).
struct LiveFile {
  std::string name;
  uint64_t size_bytes = 0;
  // True for immutable table files, which incremental checkpoints share.
  bool immutable = false;
};

class DB {
 public:
  static constexpr uint32_t kDefaultColumnFamilyId = 0;
  static constexpr const char* kDefaultColumnFamilyName = "default";

  // Opens the database in directory `name`; the default column family and
  // every column family created before are open afterwards.
  static Status Open(const Options& options, const std::string& name,
                     std::unique_ptr<DB>* db);

  // Closing flushes nothing: unflushed writes survive only through the WAL.
  virtual ~DB() = default;

  virtual ColumnFamilyHandle* DefaultColumnFamily() = 0;
  virtual Status CreateColumnFamily(const std::string& name, const ColumnFamilyOptions& options,
                                    ColumnFamilyHandle** handle) = 0;
  // Drops the family and its data. The handle stays allocated (id/name only).
  virtual Status DropColumnFamily(ColumnFamilyHandle* handle) = 0;
  // Every live column family, the default one first.
  virtual std::vector<ColumnFamilyHandle*> ListColumnFamilies() = 0;
  virtual ColumnFamilyHandle* GetColumnFamily(const std::string& name) = 0;

  virtual Status Put(const WriteOptions& options, ColumnFamilyHandle* cf, std::string_view key,
                     std::string_view value, uint64_t delete_key = kMaxDeleteKey) = 0;
  // A point delete. Its delete key (default: never removed) lets a secondary
  // delete remove the tombstone itself once it removes what it deletes; it must
  // be at least the delete key of every version of the key it deletes.
  virtual Status Delete(const WriteOptions& options, ColumnFamilyHandle* cf,
                        std::string_view key, uint64_t delete_key = kMaxDeleteKey) = 0;
  // Deletes every key k with begin <= k < end (a range tombstone).
  virtual Status DeleteRange(const WriteOptions& options, ColumnFamilyHandle* cf,
                             std::string_view begin, std::string_view end) = 0;
  // List append: the value read afterwards is the previous value, a ','
  // byte, then the operand (just the operand if there was no value).
  virtual Status Merge(const WriteOptions& options, ColumnFamilyHandle* cf,
                       std::string_view key, std::string_view operand,
                       uint64_t delete_key = kMaxDeleteKey) = 0;
  virtual Status Write(const WriteOptions& options, const WriteBatch& batch) = 0;

  // Secondary range delete (KiWi): removes every value and merge operand of
  // the family written before this call whose delete key lies in [lo, hi].
  // Entries with kMaxDeleteKey (and point tombstones) are never removed this
  // way. Logically immediate: reads, iterators and snapshots taken afterwards
  // no longer see them (a removed entry acts as a point delete of its key at
  // its own sequence number); snapshots taken before still do. Whole pages
  // whose entries are all removed are dropped by a manifest edit, without
  // reading or rewriting them; the rest goes with the compactions that FADE
  // schedules within the delete persistence threshold. Durable on return.
  virtual Status DeleteByDeleteKey(ColumnFamilyHandle* cf, uint64_t lo, uint64_t hi) = 0;
  // Expiry horizon: every value and merge operand of the family whose delete
  // key is < horizon is removed, including ones written later. Horizons only
  // move forward: a horizon at or below the current one changes nothing.
  // Part of every checkpoint; durable on return. Relies on the monotone
  // delete-key contract (above): older versions of a removed entry are
  // removed too, so none resurfaces.
  virtual Status AdvanceHorizon(ColumnFamilyHandle* cf, uint64_t horizon) = 0;
  // The family's current horizon (0 if none was set).
  virtual Status GetHorizon(ColumnFamilyHandle* cf, uint64_t* horizon) = 0;

  // NotFound if the key has no live value. delete_key may be nullptr.
  virtual Status Get(const ReadOptions& options, ColumnFamilyHandle* cf, std::string_view key,
                     std::string* value, uint64_t* delete_key = nullptr) = 0;

  // Looks up keys[0..n) at one sequence and one super version, so the results
  // are one consistent view. statuses[i] is OK (values[i] and, if delete_keys
  // is not null, delete_keys[i] hold the value), NotFound, or an error, for
  // keys[i]. Keys may come in any order and repeat; they are looked up in
  // sorted order, so a batch walks each file's index once forwards.
  virtual void MultiGet(const ReadOptions& options, ColumnFamilyHandle* cf, size_t n,
                        const std::string_view* keys, std::string* values, Status* statuses,
                        uint64_t* delete_keys = nullptr) = 0;

  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options,
                                                ColumnFamilyHandle* cf) = 0;

  virtual const Snapshot* GetSnapshot() = 0;
  virtual void ReleaseSnapshot(const Snapshot* snapshot) = 0;

  // Makes every write acknowledged so far durable: syncs the WAL (a no-op
  // without one). Cheaper than a synced write each time when many writes
  // share one commit point.
  virtual Status SyncWal() = 0;
  // Writes every memtable to level 0 and waits for it.
  virtual Status Flush() = 0;
  // Flushes, then compacts every column family until no level exceeds its
  // budget and waits for it.
  virtual Status CompactAll() = 0;
  // Waits until no flush or compaction is pending or running.
  virtual Status WaitForBackgroundWork() = 0;

  // Makes an openable copy of the database in directory `dir` (which must not
  // exist), hard-linking table files where possible: BeginCheckpoint, then
  // Finish. The copy holds every write made before it began and needs no WAL.
  virtual Status Checkpoint(const std::string& dir) = 0;
  // Begins a copy, as Checkpoint, in two steps, so that a caller that must
  // not wait long (Flink's synchronous snapshot part) does only the first:
  // this call links the table files into `dir` and takes the memtables as
  // they are now, without flushing them; PendingCheckpoint::Finish (any
  // thread, while the database goes on) writes those memtables into `dir` as
  // level-0 files of the copy's own, and its manifest (WriteImage writes one
  // family's ahead of it, several at once). The memtables stay in
  // memory, so data that dies there (fired windows, cleared state) is never
  // written to this database's files. Those copies of the memtables cost
  // uploads, not local writes; once the ones written since the last flush
  // reach a quarter of the write buffer, the memtables go to files in the
  // background (no caller waits), and the next checkpoint links them, as a
  // memtable that lives across many checkpoints would be copied by each. Table files whose every entry lies under their family's horizon
  // (and that hold no range tombstone) are left out: the copy reads the
  // latest state, which sees none of their entries. The pending checkpoint
  // must be destroyed before the database; destroyed unfinished, it removes
  // `dir`.
  virtual Status BeginCheckpoint(const std::string& dir, const CheckpointOptions& options,
                                 std::unique_ptr<PendingCheckpoint>* checkpoint) = 0;
  // The files that make up the current state: tables, the manifest and
  // CURRENT. If flush is true, memtables are flushed first.
  virtual Status GetLiveFiles(bool flush, std::vector<LiveFile>* files) = 0;

  virtual DbStatistics GetStatistics() = 0;
  // Named properties: "lethe.stats" (human readable), "lethe.num-files-at-level<N>",
  // "lethe.total-bytes", "lethe.num-entries-active-mem", "lethe.files" (one
  // line per table file: level, number, entries, delete-key bounds, dropped
  // pages, patch table and patched pages), "lethe.pages-per-tile" (as the
  // family was created; 0: chosen per file), "lethe.compression" (as the family
  // was created: "lz4,zstd" for its levels, then its last level),
  // "lethe.flush-compression" (as the family was created: its flushes' codec),
  // "lethe.compaction-style" ("leveled" or "time-ordered", as the family was
  // created). false if unknown.
  virtual bool GetProperty(ColumnFamilyHandle* cf, std::string_view property,
                           std::string* value) = 0;
};

// Removes a database directory and everything in it.
Status DestroyDB(const std::string& name, const Options& options);

}  // namespace lethe
