// DBImpl: the engine behind lethe::DB.
//
// Concurrency:
//  * write_mu_ serializes writers (WAL append and memtable insert) and the
//    memtable switch.
//  * mu_ guards the version set, column family state, snapshots and the
//    background scheduling state. It is never held during table I/O, except
//    for the short manifest append of LogAndApply.
//  * log_mu_ guards appends to the WAL (log_, prev_log_) and their
//    replacement: writers append under write_mu_ alone, manifest edits add a
//    marker under mu_. It is taken last and held for no other lock.
//  * Lock order: write_mu_ before mu_; compaction_mu_ before mu_; log_mu_ last.
//  * Two background threads: one flushes immutable memtables, one compacts.
//    compaction_mu_ serializes compactions (background and CompactAll).
//  * Readers take no lock shared with other threads: a column family's
//    handle leads to its data, whose SuperVersionCache lends the current
//    super version from a per-thread slot (super_version.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "compaction/compaction_picker.h"
#include "compaction/page_drop_job.h"
#include "compaction/page_drop_planner.h"
#include "db/read_pool.h"
#include "db/super_version.h"
#include "lethe/db.h"
#include "memtable/memtable.h"
#include "version/table_cache.h"
#include "util/live_counter.h"
#include "version/version_set.h"
#include "wal/log_writer.h"

namespace lethe {

struct ColumnFamilyData;

class ColumnFamilyHandleImpl final : public ColumnFamilyHandle {
 public:
  ColumnFamilyHandleImpl(const void* db, std::shared_ptr<ColumnFamilyData> cfd, uint32_t id, std::string name)
      : db(db), cfd(std::move(cfd)), id_(id), name_(std::move(name)) {}
  uint32_t id() const override { return id_; }
  const std::string& name() const override { return name_; }
  std::atomic<bool> dropped{false};
  const void* const db;  // the DBImpl it belongs to
  // Readers reach the family through its handle, without the database
  // mutex; a dropped family's data stays until the handle goes (at close).
  const std::shared_ptr<ColumnFamilyData> cfd;

 private:
  uint32_t id_;
  std::string name_;
};

struct ColumnFamilyData {
  uint32_t id = 0;
  std::string name;
  ColumnFamilyOptions options;
  ColumnFamilyHandleImpl* handle = nullptr;  // owned by DBImpl::handles_
  std::shared_ptr<MemTable> mem;
  std::shared_ptr<MemTable> imm;
  std::shared_ptr<const SuperVersion> super_version;  // mu_
  SuperVersionCache super_versions;                   // the same, for readers
  CompactionPointers pointers;
  // Of mem; 0 if mem holds no tombstone. Written by the writer (write_mu_),
  // read by the FADE timer and statistics (mu_): hence atomic.
  std::atomic<uint64_t> first_tombstone_time_us{0};
  uint64_t imm_first_tombstone_time_us = 0;
  // What compactions in memory kept (mu_; see SwitchMemtables): values and
  // merge operands only.
  std::shared_ptr<MemTable> resident;
  // The memtables, newest first; absent ones are null (mu_).
  std::array<const MemTable*, 3> memtables() const { return {mem.get(), imm.get(), resident.get()}; }
  // After a compaction in memory gave up (its survivors outgrew the room),
  // the next `in_memory_skips` flushes go to files without trying; each
  // failure in a row doubles that, up to 4 (mu_): a failed try costs at most a pass over part of the input.
  int in_memory_skips = 0, in_memory_backoff = 0;
  // Of the family's last flush: surviving entries per input entry; and the
  // flushes since it last tried to compact in memory (mu_).
  double survivor_fraction = 0;
  int flushes_since_in_memory_try = 0;
  // Operations observed, for the automatic delete tile size (lookups are
  // counted by super_versions).
  std::atomic<uint64_t> secondary_deletes{0};
  // When the horizon last moved and the time before (mu_): a horizon that keeps moving (TTL,
  // windows) will cover more of a partly covered page soon, a one-off one will not.
  uint64_t horizon_moved_us = 0, horizon_moved_before_us = 0;
};

class SnapshotImpl final : public Snapshot {
 public:
  explicit SnapshotImpl(SequenceNumber seq) : seq_(seq) {}
  ~SnapshotImpl() override = default;
  uint64_t sequence() const override { return seq_; }

 private:
  SequenceNumber seq_;
};

class DBImpl final : public DB {
 public:
  DBImpl(const Options& options, std::string dbname);
  ~DBImpl() override;

  Status OpenImpl();

  ColumnFamilyHandle* DefaultColumnFamily() override;
  Status CreateColumnFamily(const std::string& name, const ColumnFamilyOptions& options,
                            ColumnFamilyHandle** handle) override;
  Status DropColumnFamily(ColumnFamilyHandle* handle) override;
  std::vector<ColumnFamilyHandle*> ListColumnFamilies() override;
  ColumnFamilyHandle* GetColumnFamily(const std::string& name) override;

  Status Put(const WriteOptions& o, ColumnFamilyHandle* cf, std::string_view key,
             std::string_view value, uint64_t delete_key) override;
  Status Delete(const WriteOptions& o, ColumnFamilyHandle* cf, std::string_view key,
                uint64_t delete_key = kMaxDeleteKey) override;
  Status DeleteRange(const WriteOptions& o, ColumnFamilyHandle* cf, std::string_view begin,
                     std::string_view end) override;
  Status Merge(const WriteOptions& o, ColumnFamilyHandle* cf, std::string_view key,
               std::string_view operand, uint64_t delete_key) override;
  Status Write(const WriteOptions& o, const WriteBatch& batch) override;

  Status DeleteByDeleteKey(ColumnFamilyHandle* cf, uint64_t lo, uint64_t hi) override;
  Status AdvanceHorizon(ColumnFamilyHandle* cf, uint64_t horizon) override;
  Status GetHorizon(ColumnFamilyHandle* cf, uint64_t* horizon) override;

  Status Get(const ReadOptions& o, ColumnFamilyHandle* cf, std::string_view key,
             std::string* value, uint64_t* delete_key) override;
  void MultiGet(const ReadOptions& o, ColumnFamilyHandle* cf, size_t n, const std::string_view* keys,
                std::string* values, Status* statuses, uint64_t* delete_keys) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& o, ColumnFamilyHandle* cf) override;
  const Snapshot* GetSnapshot() override;
  void ReleaseSnapshot(const Snapshot* snapshot) override;

  Status SyncWal() override;
  Status Flush() override;
  Status CompactAll() override;
  Status WaitForBackgroundWork() override;
  Status Checkpoint(const std::string& dir) override;
  Status BeginCheckpoint(const std::string& dir, const CheckpointOptions& options,
                         std::unique_ptr<PendingCheckpoint>* checkpoint) override;
  Status GetLiveFiles(bool flush, std::vector<LiveFile>* files) override;
  DbStatistics GetStatistics() override;
  bool GetProperty(ColumnFamilyHandle* cf, std::string_view property, std::string* value) override;

 private:
  // Open and recovery (db_impl_open.cc).
  // *torn: the log ended in a torn (dropped) record.
  Status RecoverLogFile(uint64_t number, SequenceNumber* max_seq, bool* torn);
  Status NewLogFile();  // REQUIRES: mu_ held
  // versions_->LogAndApply, then the edit's marker in the current WAL
  // (write_batch_internal.h). REQUIRES: mu_ held.
  Status LogAndApply(VersionEdit* edit);
  ColumnFamilyData* AddColumnFamilyData(const ColumnFamilyDescriptor& d);
  // Gives freed heap memory back to the operating system, at most once per
  // `interval_us` (by default Options::heap_trim_interval_us) across the
  // process; without mu_ meanwhile.
  void TrimHeap(std::unique_lock<std::mutex>& l, uint64_t interval_us);
  void TrimHeap(std::unique_lock<std::mutex>& l) { TrimHeap(l, options_.heap_trim_interval_us); }
  // The flush thread's wait for work: at most kSqueezeCheckMicros when heap
  // trims are on, then trims if the budget's page cache gave way to
  // memtables (MemoryBudgetImpl::SqueezedEnoughToTrim), at most once per
  // kSqueezeTrimMicros (or the trim interval, if shorter). False if it timed out.
  template <typename Ready>
  bool WaitForFlushWork(std::unique_lock<std::mutex>& l, Ready ready);
  static constexpr uint64_t kSqueezeCheckMicros = 250'000;
  static constexpr uint64_t kSqueezeTrimMicros = 1'000'000;

  // Write path.
  Status ValidateBatch(const WriteBatch& batch);
  Status MakeRoomForWrite(std::unique_lock<std::mutex>& l);
  // Makes the mutable memtables immutable and wakes the flush. Unless
  // `to_files`, the flush may compact them in memory (Options::
  // compact_in_memory): what survives stays as the family's resident
  // memtable when it fits in a quarter of the write buffers and holds no
  // tombstone. With `to_files` the residents go to files too (Flush and so
  // checkpoints); `awaited`: a caller waits for that flush (Flush), which
  // then keeps the fast codec.
  // REQUIRES: write_mu_ and mu_ held
  void SwitchMemtables(bool to_files = false, bool awaited = false);
  // Once the copies checkpoints wrote since the last flush to files reach a
  // quarter of the write buffer, the memtables go to files in the
  // background, so that the next checkpoint links them instead of copying
  // them again. REQUIRES: write_mu_ and mu_ held
  void FlushCopiesPastTheirShare();
  // Whether a checkpoint beginning now would copy its memtables only to see
  // them flushed right after (the copies since the last flush, with this one
  // at the last copy's bytes per memtable byte, reach the quarter): then it
  // switches them first and links what their flush writes instead.
  // REQUIRES: write_mu_ and mu_ held
  bool CopyWouldBeFlushed() const;
  void InstallSuperVersion(ColumnFamilyData* cfd);  // REQUIRES: mu_ held
  // After an edit that changed files only: every family moves to the new
  // version, so that no idle family keeps the old one alive (its files from
  // being deleted, its dropped pages from being punched). REQUIRES: mu_ held
  void InstallSuperVersions();
  ColumnFamilyData* Resolve(ColumnFamilyHandle* cf, Status* s);  // mu_ held
  // The family of a handle, without locks (a dropped one still resolves: its
  // super versions are cleared).
  ColumnFamilyData* ResolveForRead(ColumnFamilyHandle* cf, Status* s);
  // The super version to read and the sequence to read it at. Without a
  // snapshot, the sequence is loaded after the super version was taken: a
  // flush or compaction installed before keeps only the newest versions of a
  // key, which an older sequence could not see, so it would read past them
  // into older files. The super version must still be the current one once
  // the sequence is loaded: memtable switches and secondary deletes install
  // theirs before publishing the sequence that needs them. A snapshot's
  // sequence is registered, so what it reads is kept.
  SuperVersionCache::Lease AcquireForRead(ColumnFamilyData* cfd, const ReadOptions& o, uint64_t point_lookups,
                                          uint64_t range_lookups, SequenceNumber* seq);
  // One point lookup in a super version, at seq.
  Status GetFrom(const SuperVersion& sv, const ReadOptions& o, SequenceNumber seq, std::string_view key,
                 std::string* value, uint64_t* delete_key);
  // The lookups of one run of a MultiGet batch, sorted by key: memtables,
  // then the files (MultiGetFromFiles). At most kMultiGetChunk contexts.
  void MultiGetFrom(const SuperVersion& sv, const ReadOptions& o, std::span<GetContext> ctxs);
  Status WaitForFlush(std::unique_lock<std::mutex>& l);

  // Statistics (db_impl_statistics.cc): one family's memtables and levels (mu_ held).
  ColumnFamilyStatistics ColumnFamilyStatisticsOf(const ColumnFamilyData& cfd, uint64_t now);

  // Checkpoints (db_impl_checkpoint.cc): a copy begun, its memtables taken.
  class CheckpointCopy;
  // Takes the state into copy: files, memtables, manifest fields; with
  // `flushing`, the memtables were just switched, and the copy links what
  // their flush writes. REQUIRES: write_mu_ and mu_ held
  void CaptureCheckpoint(CheckpointCopy* copy, bool flushing);
  // Hands the flush just installed (its new files and the version holding
  // them) to the copies waiting for it. REQUIRES: mu_ held
  void HandFlushToCopies(const VersionEdit& edit);

  // Background work (db_impl_background.cc).
  void FlushThread();
  void CompactionThread();
  // Flushes (db_impl_flush.cc): every family's immutable memtable (and
  // resident one) to level-0 files or, when compacted in memory, to a new
  // resident memtable. mu_ held via l, released while the work runs.
  struct FlushJob;
  Status FlushImmutable(std::unique_lock<std::mutex>& l);
  std::vector<FlushJob> CollectFlushJobs(bool to_files, size_t room);  // mu_ held
  bool WorthCompactingInMemory(const ColumnFamilyData& cfd, const FlushJob& job, size_t room);  // mu_ held
  Status CompactInMemory(FlushJob* job, const std::vector<SequenceNumber>& snapshots, size_t room);
  Status FlushToTables(FlushJob& job, const std::vector<SequenceNumber>& snapshots, VersionEdit* edit,
                       std::vector<FileMetaData>* outputs);
  void InstallFlushed(std::vector<FlushJob>& jobs);  // mu_ held
  void HandOverCharge(std::vector<FlushJob> jobs);   // mu_ held
  // Bytes a compaction in memory may keep, all families together (mu_ held).
  size_t InMemoryRoom();
  // Runs one compaction plan of cfd; REQUIRES compaction_mu_ held, mu_ held via l.
  Status RunCompaction(std::unique_lock<std::mutex>& l, ColumnFamilyData* cfd,
                       const CompactionPlan& plan);
  bool PickBackgroundCompaction(ColumnFamilyData** cfd, CompactionPlan* plan);  // mu_ held
  // Removes the files no version or pending output needs and punches the
  // holes of dropped pages nothing reads any more. Decided under mu_ (held
  // via l), done with mu_ released: unlinking large files and punching holes
  // take milliseconds, and writers wait for mu_.
  void DeleteObsoleteFiles(std::unique_lock<std::mutex>& l);
  void RecordBackgroundError(const Status& s);  // mu_ held
  // Whether someone waits for the pending flush: a Flush call, or a
  // checkpoint copy that links its files (mu_ held).
  bool FlushAwaited() const;
  void NoteFlushAwaited();  // mu_ held: refreshes flush_awaited_
  // Polled by compactions between keys, mu_ not held: while a flush is
  // awaited, waits until it is installed, at most `limit` (on two cores a
  // compaction beside the flush takes the core it would run on). Returns
  // false when the wait hit the limit: the caller stops giving way.
  bool GiveWayToAwaitedFlush(std::chrono::milliseconds limit);
  Status SyncLogsLocked();                       // log_mu_ held
  std::vector<SequenceNumber> SnapshotList();   // mu_ held
  uint64_t OldestSnapshot();                    // mu_ held; kMaxSequenceNumber if none
  bool KeyMayExist(ColumnFamilyData* cfd, std::string_view key);  // write_mu_ held, takes mu_
  // Whether a file of `files` may hold a version of `key` (Bloom filters; no page read). With
  // TableOpen::kNever only tables open now are asked: a file whose table is not open may.
  bool FilesMayContain(const ColumnFamilyFiles& files, std::string_view key,
                       TableOpen open = TableOpen::kIfNeeded);
  bool FadeFlushDue();                          // mu_ held: a memtable's tombstones are overdue
  bool BudgetFlushDue();                        // mu_ held: the memory budget asked for a flush
  uint64_t FadeCheckPeriod();                   // mu_ held: µs between FADE checks, 0 if off
  uint64_t NewPendingFileNumber();              // takes mu_
  void ReleasePendingOutputs(const std::vector<FileMetaData>& files);  // mu_ held

  // Secondary deletes (db_impl_secondary.cc).
  // Lets `add` extend the family's records with a record that takes the next
  // sequence number (add returns false: nothing to do), and installs them.
  Status AddSecondaryRecord(ColumnFamilyHandle* cf,
                            const std::function<bool(SecondaryDeletes*, SequenceNumber, uint64_t)>& add);
  // Drops every page that secondary deletes fully cover and rewrites partly
  // covered ones (page_drop_planner.h), in one manifest edit, then compacts
  // alone each file whose every page the rewrites would take; REQUIRES
  // compaction_mu_ held, mu_ held via l. The caller then deletes obsolete
  // files and punches holes.
  Status DropCoveredPages(std::unique_lock<std::mutex>& l);
  struct PageDropCandidate;
  struct PageDropChange;
  struct PageDropCounts {
    uint64_t partly_covered = 0, pages_dropped = 0, page_bytes_dropped = 0, pages_rewritten = 0,
             rewrite_bytes_read = 0, rewrite_bytes_written = 0;
    void Add(const PageDropPlan& plan, const PageDropResult& r) {
      pages_dropped += plan.drop.size();
      page_bytes_dropped += plan.drop_bytes;
      pages_rewritten += r.pages_rewritten;
      rewrite_bytes_read += r.rewrite_bytes_read;
      rewrite_bytes_written += r.rewrite_bytes_written;
    }
  };
  // Files whose pages the records may touch (mu_ held).
  std::vector<PageDropCandidate> PageDropCandidates(const Version& version, uint64_t now);
  // Plans one file's page drops and carries them out (no lock held).
  Status PlanAndDropPages(const Version& version, const PageDropCandidate& c,
                          const std::multiset<SequenceNumber>& snapshots, uint64_t now,
                          PageDropPlan* plan, PageDropResult* result);
  // The version edit of the changed files, and their holes to punch (mu_ held).
  Status InstallPageDrops(std::vector<PageDropChange>& changes, const PageDropCounts& counts);
  // Whether the plan's rule 4 holds where it may: a file of level 0 stays
  // out, since a compaction's outputs lose its place in that level's order.
  static bool CompactAlone(const PageDropCandidate& c, const PageDropPlan& plan);
  // Compacts each of `files` alone into its own level, if it is still
  // current (mu_ held; the compaction lock too).
  Status CompactFilesAlone(std::unique_lock<std::mutex>& l, const std::vector<PageDropCandidate>& files);
  // Removes patch tables no edit names (mu_ held).
  void DiscardPatches(const std::vector<FileMetaData>& patches);
  // Holes to punch, in one file.
  struct Punch {
    std::string fname;
    std::vector<std::pair<uint64_t, uint64_t>> extents;  // offset, length
  };
  // Takes from pending_punches_ the holes no reader or checkpoint link needs
  // any more (mu_ held).
  std::vector<Punch> TakeDuePunches();
  // Punches them (without mu_: they are no longer pending).
  void PunchHoles(const std::vector<Punch>& punches);
  // At open: queues again the holes of every page the live file records no
  // longer read (mu_ held).
  void QueueUnreadPagePunches();
  // The pages of f its record no longer reads, into p's pages and extents.
  struct PendingPunch;
  Status UnreadPageExtents(const FileMetaData& f, PendingPunch* p);
  // Writes a smaller record list for each family where some records no
  // longer matter (mu_ held).
  Status TidySecondaryDeletes();
  SequenceNumber OldestUnflushedSequence(const ColumnFamilyData* cfd);  // mu_ held
  // h for the family's next file: its option, or chosen from the workload
  // when the option is kPagesPerTileAuto (mu_ held).
  int TileSizeFor(const ColumnFamilyData& cfd);

  // Declared first of the members, so destroyed last: once everything else
  // of a closing database is freed, gives the freed memory back to the
  // operating system (util/heap_trim.h).
  struct TrimHeapOnClose {
    uint64_t interval_us;
    ~TrimHeapOnClose();
  } trim_heap_on_close_;

  const Options options_;
  const std::string dbname_;
  Env* const env_;
  Clock* const clock_;

  std::unique_ptr<FileLock> db_lock_;
  // Page cache, open tables and write buffers: the options' budget, or one
  // of the database's own. Declared before everything that holds readers.
  std::shared_ptr<MemoryBudgetImpl> budget_;
  std::shared_ptr<WriteBufferShare> write_share_;
  TableReadCounters read_counters_;
  std::unique_ptr<TableCache> table_cache_;

  std::mutex write_mu_;
  std::mutex mu_;
  std::mutex compaction_mu_;
  std::mutex log_mu_;
  std::condition_variable bg_cv_;  // signalled when background state changes

  std::unique_ptr<VersionSet> versions_;
  std::map<uint32_t, std::shared_ptr<ColumnFamilyData>> cfds_;
  std::vector<std::unique_ptr<ColumnFamilyHandleImpl>> handles_;  // live until close
  std::atomic<SequenceNumber> last_sequence_{0};

  std::unique_ptr<log::Writer> log_;
  // The log before log_, until a synced write has synced it (write_mu_): a
  // synced write makes every earlier write durable, also those of the
  // previous log whose memtable may not be flushed yet.
  std::unique_ptr<log::Writer> prev_log_;
  uint64_t log_number_ = 0;      // current WAL (0: none)
  uint64_t imm_log_number_ = 0;  // first WAL not needed once imm is flushed
  bool imm_pending_ = false;
  std::chrono::steady_clock::time_point imm_switched_at_;  // when the memtables last switched
  std::atomic<uint64_t> mem_bytes_{0};  // written since the last switch
  bool imm_to_files_ = false;           // the pending flush must write files (mu_)
  bool imm_awaited_ = false;            // and a caller waits for it (Flush) (mu_)
  uint64_t resident_bytes_ = 0;         // memory of the families' resident memtables (mu_)
  // Bytes checkpoints wrote from memtables into their copies since the
  // memtables last went to files (BeginCheckpoint).
  std::atomic<uint64_t> checkpoint_image_bytes_{0};
  // Bytes the last copy wrote per byte of the memtables it copied (mu_); 0
  // before the first copy.
  double copy_bytes_ratio_ = 0;
  // Copies waiting for the pending flush, which they link (mu_), and the
  // files of the version they began at: that flush takes its view of the
  // deeper files (which keys they may hold, the horizons) from it, so that
  // it writes what was visible when the copy began.
  std::vector<CheckpointCopy*> copies_awaiting_flush_;
  VersionRef flush_view_;
  // FlushAwaited() as last noted under mu_, for compactions to read between
  // keys without it.
  std::atomic<bool> flush_awaited_{false};
  LiveCounter open_iterators_;    // iterators reading this database
  LiveCounter open_checkpoints_;  // checkpoint copies not yet released
  size_t uncharged_bytes_ = 0;  // written but not yet charged to the budget (write_mu_)

  std::multiset<SequenceNumber> snapshots_;
  std::set<uint64_t> pending_outputs_;
  Status bg_error_;
  bool shutting_down_ = false;
  std::atomic<bool> shutting_down_flag_{false};
  int manual_compactions_ = 0;  // CompactAll calls in progress
  // The compaction running now (mu_): since when, and its input bytes; zeros if none.
  struct RunningCompaction {
    uint64_t since_us = 0;
    uint64_t input_bytes = 0;
  } running_compaction_;
  bool page_drops_pending_ = false;  // a secondary delete may have covered whole pages
  bool page_drops_deferred_ = false;  // partly covered pages wait: look again at the next periodic wake-up
  // Extents of dropped pages whose hole is not punched yet: waits until no
  // reader may read those pages from the file, and no other hard link (a
  // checkpoint) shares the file. A reader holds a version, whose record of
  // the file may be older than `before` (a drop before this one), or holds
  // `before` itself (a compaction's inputs).
  struct PendingPunch {
    uint64_t file_number;
    std::vector<std::pair<uint64_t, uint64_t>> extents;  // offset, length
    std::vector<uint32_t> pages;  // the pages whose bytes the extents are
    std::weak_ptr<const FileMetaData> before;
  };
  std::vector<PendingPunch> pending_punches_;
  bool compaction_running_ = false;
  // DeleteObsoleteFiles calls removing files with mu_ released: background
  // work is not done, nor a flush, until they have finished.
  int removals_running_ = 0;

  std::thread flush_thread_, compaction_thread_;

  // Counters (statistics.h); values computed when asked for stay 0 here.
  std::atomic<uint64_t> tickers_[kTickerCount] = {};
  std::atomic<uint64_t>& ticker(Ticker t) { return tickers_[static_cast<int>(t)]; }
  void Record(Ticker t, uint64_t n) { ticker(t).fetch_add(n, std::memory_order_relaxed); }
  // Adds the wall time since start (steady clock), in microseconds rounded up.
  void RecordMicrosSince(Ticker t, std::chrono::steady_clock::time_point start) {
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    Record(t, static_cast<uint64_t>((nanos.count() + 999) / 1000));
  }

  // Helps MultiGet through large batches (null without helpers). Last, so
  // that its threads end first.
  std::unique_ptr<ReadPool> read_pool_;
};

}  // namespace lethe
