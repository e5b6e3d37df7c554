// DBImpl: the write path and the read path.
#include "db/db_impl.h"

#include <algorithm>
#include <array>
#include <span>

#include "compaction/time_ordered.h"
#include "db/memtable_inserter.h"
#include "db/write_batch_internal.h"
#include "iterator/db_iter.h"
#include "iterator/merging_iterator.h"
#include "iterator/skip_covered_iterator.h"
#include "util/kill_point.h"

namespace lethe {

// Keys and values are bounded so that every length fits the formats' varint32
// fields with room to spare and a single entry cannot exhaust memory.
constexpr size_t kMaxKeyBytes = 64u << 20;
constexpr size_t kBudgetChargeStep = 64u << 10;
constexpr size_t kMaxValueBytes = 1u << 30;
// The most keys of a MultiGet batch in one chunk: neighbours in key order,
// looked up together.
constexpr size_t kMultiGetChunk = 16;
// The fewest, bar the last.
constexpr size_t kMultiGetMinChunk = 2;

namespace {

// Where the chunks of a MultiGet batch of n keys shared by `workers` threads
// start, with n at the end: a chunk takes a share of the keys left, so that
// chunks shrink towards the end and the threads finish close together.
std::vector<size_t> MultiGetChunkStarts(size_t n, size_t workers) {
  std::vector<size_t> starts{0};
  for (size_t at = 0; at < n;) {
    const size_t share = (n - at + 2 * workers - 1) / (2 * workers);
    at += std::min(n - at, std::clamp(share, kMultiGetMinChunk, kMultiGetChunk));
    starts.push_back(at);
  }
  return starts;
}

// Each source's iterator passes over what range tombstones delete, its own
// and newer sources': iters[i] reads source source_of[i]; sources are
// numbered newest first.
void SkipRangeDeleted(const std::vector<TombstoneSource>& sources, const std::vector<size_t>& source_of,
                      SequenceNumber seq, std::atomic<uint64_t>* skips,
                      std::vector<std::unique_ptr<InternalIterator>>* iters) {
  for (size_t i = 0; i < iters->size(); i++) {
    std::vector<const TombstoneSource*> newer;
    for (size_t j = 0; j < source_of[i]; j++) newer.push_back(&sources[j]);
    (*iters)[i] = NewSkipCoveredIterator(std::move((*iters)[i]), std::move(newer), &sources[source_of[i]], seq, skips);
  }
}

// What an iterator reads from, kept alive as long as it.
struct PinnedSources {
  std::shared_ptr<const SuperVersion> sv;
  std::shared_ptr<const std::vector<TombstoneSource>> tombstones;
  LiveCounter::Token open;  // counts the iterator
};

// sv without its mutable memtable when none of that memtable's entries is
// visible at seq (it is empty, or began after seq): every later write is
// newer still, so an iterator reading at seq would only keep it alive, and
// keep it charged to the memory budget once flushed, for nothing. A snapshot's
// long read (a savepoint) would otherwise hold each memtable that was mutable
// when it started until it ends.
std::shared_ptr<const SuperVersion> WithoutUnreadMemtable(std::shared_ptr<const SuperVersion> sv, SequenceNumber seq) {
  if (sv == nullptr || sv->mem == nullptr) return sv;
  const MemTable& m = *sv->mem;
  if (!m.empty() && m.first_sequence() <= seq) return sv;
  auto kept = std::make_shared<SuperVersion>(*sv);
  kept->mem.reset();
  return kept;
}

Status DroppedFamily(ColumnFamilyHandle* cf) {
  return Status::InvalidArgument("column family was dropped or belongs to another database", cf->name());
}

}  // namespace

void DBImpl::InstallSuperVersion(ColumnFamilyData* cfd) {
  auto sv = std::make_shared<SuperVersion>();
  sv->mem = cfd->mem;
  sv->imm = cfd->imm;
  sv->resident = cfd->resident;
  sv->version = versions_->current();
  const ColumnFamilyFiles* files = sv->version->Find(cfd->id);
  auto it = sv->version->cfs.find(cfd->id);
  if (files != nullptr) sv->files = it->second;
  else sv->files = std::make_shared<ColumnFamilyFiles>();
  cfd->super_version = sv;
  cfd->super_versions.Install(std::move(sv));
}

void DBImpl::InstallSuperVersions() {
  for (auto& [id, cfd] : cfds_) InstallSuperVersion(cfd.get());
}

ColumnFamilyData* DBImpl::Resolve(ColumnFamilyHandle* cf, Status* s) {
  if (cf == nullptr) {
    *s = Status::InvalidArgument("null column family handle");
    return nullptr;
  }
  auto it = cfds_.find(cf->id());
  if (it == cfds_.end() || it->second->handle != cf) {
    *s = DroppedFamily(cf);
    return nullptr;
  }
  return it->second.get();
}

ColumnFamilyData* DBImpl::ResolveForRead(ColumnFamilyHandle* cf, Status* s) {
  if (cf == nullptr) {
    *s = Status::InvalidArgument("null column family handle");
    return nullptr;
  }
  // Handles are made by DBImpl alone (the class is final and internal).
  const auto* h = static_cast<const ColumnFamilyHandleImpl*>(cf);
  if (h->db != this || h->dropped.load(std::memory_order_acquire)) {
    *s = DroppedFamily(cf);
    return nullptr;
  }
  return h->cfd.get();
}

Status DBImpl::Put(const WriteOptions& o, ColumnFamilyHandle* cf, std::string_view key,
                   std::string_view value, uint64_t delete_key) {
  if (cf == nullptr) return Status::InvalidArgument("null column family handle");
  WriteBatch b;
  b.Put(cf, key, value, delete_key);
  return Write(o, b);
}

Status DBImpl::Delete(const WriteOptions& o, ColumnFamilyHandle* cf, std::string_view key,
                      uint64_t delete_key) {
  if (cf == nullptr) return Status::InvalidArgument("null column family handle");
  WriteBatch b;
  b.Delete(cf, key, delete_key);
  return Write(o, b);
}

Status DBImpl::DeleteRange(const WriteOptions& o, ColumnFamilyHandle* cf, std::string_view begin,
                           std::string_view end) {
  if (cf == nullptr) return Status::InvalidArgument("null column family handle");
  WriteBatch b;
  b.DeleteRange(cf, begin, end);
  return Write(o, b);
}

Status DBImpl::Merge(const WriteOptions& o, ColumnFamilyHandle* cf, std::string_view key,
                     std::string_view operand, uint64_t delete_key) {
  if (cf == nullptr) return Status::InvalidArgument("null column family handle");
  WriteBatch b;
  b.Merge(cf, key, operand, delete_key);
  return Write(o, b);
}

// Checks a batch before anything is written: families exist, sizes are in
// bounds, ranges are not inverted, and the encoding is well formed.
class BatchValidator final : public WriteBatch::Handler {
 public:
  explicit BatchValidator(const std::map<uint32_t, std::shared_ptr<ColumnFamilyData>>* cfds) : cfds_(cfds) {}
  Status Put(uint32_t cf, std::string_view k, std::string_view v, uint64_t) override { return Check(cf, k, v); }
  Status Merge(uint32_t cf, std::string_view k, std::string_view v, uint64_t) override { return Check(cf, k, v); }
  Status Delete(uint32_t cf, std::string_view k, uint64_t) override { return Check(cf, k, {}); }
  Status DeleteRange(uint32_t cf, std::string_view b, std::string_view e) override {
    Status s = Check(cf, b, e);
    if (s.ok() && !(b < e)) return Status::InvalidArgument("delete range: begin must be less than end");
    return s;
  }

 private:
  Status Check(uint32_t cf, std::string_view k, std::string_view v) {
    if (cfds_->find(cf) == cfds_->end()) return Status::InvalidArgument("write to unknown or dropped column family", std::to_string(cf));
    if (k.size() > kMaxKeyBytes) return Status::InvalidArgument("key larger than 64 MiB");
    if (v.size() > kMaxValueBytes) return Status::InvalidArgument("value larger than 1 GiB");
    return Status::OK();
  }
  const std::map<uint32_t, std::shared_ptr<ColumnFamilyData>>* cfds_;
};

// The previous log first: it may hold writes the current one follows.
Status DBImpl::SyncLogsLocked() {
  Status s;
  if (prev_log_ != nullptr) {
    s = prev_log_->Sync();
    if (s.ok()) s = prev_log_->Close();
    if (s.ok()) prev_log_.reset();
  }
  if (s.ok() && log_ != nullptr) s = log_->Sync();
  return s;
}

Status DBImpl::SyncWal() {
  Status s;
  {
    std::lock_guard<std::mutex> lg(log_mu_);
    s = SyncLogsLocked();
  }
  if (!s.ok()) {
    // What was written may not be durable: stop accepting writes.
    std::lock_guard<std::mutex> l(mu_);
    RecordBackgroundError(s);
  }
  return s;
}

Status DBImpl::Write(const WriteOptions& o, const WriteBatch& batch) {
  std::lock_guard<std::mutex> w(write_mu_);
  uint32_t count = batch.Count();
  {
    // cfds_ changes only under write_mu_, which we hold.
    BatchValidator validator(&cfds_);
    Status s = batch.Iterate(&validator);
    if (!s.ok()) return s.IsCorruption() ? Status::InvalidArgument(s.message()) : s;
  }
  if (count == 0) return Status::OK();
  {
    std::unique_lock<std::mutex> l(mu_);
    Status s = MakeRoomForWrite(l);
    if (!s.ok()) return s;
  }
  SequenceNumber seq = last_sequence_.load(std::memory_order_relaxed) + 1;
  if (log_ != nullptr && !o.disable_wal) {
    std::string record(WriteBatchInternal::Contents(batch));
    EncodeFixed64(record.data(), seq);
    std::unique_lock<std::mutex> lg(log_mu_);
    Status s = log_->AddRecord(record);
    if (s.ok()) KillPoint("wal.appended");
    if (s.ok() && o.sync) s = SyncLogsLocked();
    lg.unlock();
    Record(Ticker::kBytesWrittenWal, record.size() + 8);
    if (!s.ok()) {
      // The WAL may now hold a partial record: stop accepting writes.
      std::lock_guard<std::mutex> l(mu_);
      RecordBackgroundError(s);
      return s;
    }
  }
  MemTableInserter inserter(&cfds_, clock_, seq);
  if (options_.avoid_blind_deletes) {
    inserter.SkipBlindDeletes([this](ColumnFamilyData* cfd, std::string_view key) { return KeyMayExist(cfd, key); });
  }
  Status s = batch.Iterate(&inserter);
  if (!s.ok()) return s;  // cannot happen: validated above
  Record(Ticker::kBlindDeletesSkipped, inserter.blind_deletes_skipped());
  mem_bytes_.fetch_add(inserter.bytes(), std::memory_order_relaxed);
  // Charged in steps, so that the budget's lock stays off most writes.
  uncharged_bytes_ += inserter.bytes();
  if (uncharged_bytes_ >= kBudgetChargeStep) {
    write_share_->Charge(uncharged_bytes_);
    uncharged_bytes_ = 0;
  }
  Record(Ticker::kUserBytesWritten, inserter.user_bytes());
  last_sequence_.store(seq + count - 1, std::memory_order_release);
  return Status::OK();
}

Status DBImpl::MakeRoomForWrite(std::unique_lock<std::mutex>& l) {
  bool stalled = false;
  while (true) {
    if (!bg_error_.ok()) return bg_error_;
    // Residents take their room from the mutable memtable.
    if (mem_bytes_.load(std::memory_order_relaxed) + resident_bytes_ < options_.write_buffer_size) {
      if (BudgetFlushDue()) {
        SwitchMemtables();
        return bg_error_;
      }
      // Too many level-0 files, or write buffers over the memory budget
      // while this database's flush runs: wait for it to catch up.
      bool l0_stop = imm_pending_ && write_share_->flush_requested() && budget_->WriteBuffersOverLimit();
      if (options_.background_compactions) {
        for (const auto& [id, cfd] : cfds_) {
          const ColumnFamilyFiles& f = *cfd->super_version->files;
          if (Level0Stalls(f, cfd->options)) l0_stop = true;
        }
      }
      if (!l0_stop) return Status::OK();
    } else if (!imm_pending_) {
      SwitchMemtables();
      return bg_error_;
    }
    if (!stalled) Record(Ticker::kWriteStalls, 1);
    stalled = true;
    bg_cv_.notify_all();
    bg_cv_.wait(l);
  }
}

void DBImpl::SwitchMemtables(bool to_files, bool awaited) {
  if (options_.use_wal) {
    Status s = NewLogFile();
    if (!s.ok()) {
      RecordBackgroundError(s);
      return;
    }
    imm_log_number_ = log_number_;
  } else {
    imm_log_number_ = 0;
  }
  bool any = false;
  for (auto& [id, cfd] : cfds_) {
    if (cfd->mem->empty()) continue;
    cfd->imm = std::move(cfd->mem);
    cfd->imm_first_tombstone_time_us = cfd->first_tombstone_time_us;
    cfd->first_tombstone_time_us = 0;
    cfd->mem = std::make_shared<MemTable>(cfd->imm->num_entries());
    InstallSuperVersion(cfd.get());
    any = true;
  }
  if (to_files) {
    for (const auto& [id, cfd] : cfds_) any = any || cfd->resident != nullptr;
    imm_to_files_ = true;
    imm_awaited_ = awaited;
  }
  mem_bytes_ = 0;
  write_share_->Switched(uncharged_bytes_);
  uncharged_bytes_ = 0;
  imm_pending_ = any || imm_log_number_ != 0;
  NoteFlushAwaited();
  imm_switched_at_ = std::chrono::steady_clock::now();
  bg_cv_.notify_all();
}

SuperVersionCache::Lease DBImpl::AcquireForRead(ColumnFamilyData* cfd, const ReadOptions& o, uint64_t point_lookups,
                                                uint64_t range_lookups, SequenceNumber* seq) {
  if (o.snapshot != nullptr) {
    *seq = o.snapshot->sequence();
    return cfd->super_versions.Acquire(point_lookups, range_lookups);
  }
  return cfd->super_versions.Acquire(point_lookups, range_lookups, last_sequence_, seq);
}

Status DBImpl::Get(const ReadOptions& o, ColumnFamilyHandle* cf, std::string_view key,
                   std::string* value, uint64_t* delete_key) {
  if (value == nullptr) return Status::InvalidArgument("null value pointer");
  Status s;
  ColumnFamilyData* cfd = ResolveForRead(cf, &s);
  if (cfd == nullptr) return s;
  SequenceNumber seq = 0;
  SuperVersionCache::Lease sv = AcquireForRead(cfd, o, 1, 0, &seq);
  if (sv.get() == nullptr) return DroppedFamily(cf);
  return GetFrom(*sv.get(), o, seq, key, value, delete_key);
}

Status DBImpl::GetFrom(const SuperVersion& sv, const ReadOptions& o, SequenceNumber seq, std::string_view key,
                       std::string* value, uint64_t* delete_key) {
  GetContext ctx(key, seq, &sv.files->secondary);
  for (const MemTable* m : sv.memtables()) {
    if (m != nullptr && !ctx.EndSource()) m->Get(&ctx);
  }
  if (!ctx.EndSource()) {
    const std::optional<uint64_t> dk = o.has_delete_key ? std::optional<uint64_t>(o.delete_key) : std::nullopt;
    Status s = GetFromFiles(*sv.files, table_cache_.get(), &ctx, o.fill_cache, dk);
    if (!s.ok()) return s;
  }
  return ctx.Finish(value, delete_key);
}

void DBImpl::MultiGet(const ReadOptions& o, ColumnFamilyHandle* cf, size_t n, const std::string_view* keys,
                      std::string* values, Status* statuses, uint64_t* delete_keys) {
  if (n == 0 || statuses == nullptr) return;
  Status s = keys == nullptr || values == nullptr ? Status::InvalidArgument("null keys or values") : Status::OK();
  ColumnFamilyData* cfd = s.ok() ? ResolveForRead(cf, &s) : nullptr;
  if (cfd == nullptr) return std::fill(statuses, statuses + n, s);
  SequenceNumber seq = 0;
  SuperVersionCache::Lease sv = AcquireForRead(cfd, o, n, 0, &seq);
  if (sv.get() == nullptr) return std::fill(statuses, statuses + n, DroppedFamily(cf));
  // Sorted, so that the batch walks each level once; a repeated key is
  // looked up once.
  std::vector<uint32_t> order(n), firsts;
  for (size_t i = 0; i < n; i++) order[i] = static_cast<uint32_t>(i);
  std::stable_sort(order.begin(), order.end(), [keys](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  for (size_t j = 0; j < n; j++) {
    if (j == 0 || keys[order[j]] != keys[order[j - 1]]) firsts.push_back(order[j]);
  }
  std::vector<GetContext> ctxs;
  ctxs.reserve(firsts.size());
  for (uint32_t i : firsts) ctxs.emplace_back(keys[i], seq, &sv.get()->files->secondary);
  // A chunk is a run of neighbouring keys, looked up together.
  const std::vector<size_t> starts =
      MultiGetChunkStarts(firsts.size(), read_pool_ != nullptr ? 1 + read_pool_->threads() : 1);
  auto look_up = [&](size_t c) {
    const size_t begin = starts[c], end = starts[c + 1];
    const std::span<GetContext> chunk = std::span<GetContext>(ctxs).subspan(begin, end - begin);
    try {
      MultiGetFrom(*sv.get(), o, chunk);
      for (size_t j = begin; j < end; j++) {
        const uint32_t i = firsts[j];
        statuses[i] = ctxs[j].Finish(&values[i], delete_keys != nullptr ? &delete_keys[i] : nullptr);
      }
    } catch (const std::exception& e) {  // e.g. bad_alloc on a helper thread: the chunk fails
      for (size_t j = begin; j < end; j++) statuses[firsts[j]] = Status::IOError("multiget", e.what());
    }
  };
  const size_t chunks = starts.size() - 1;
  if (read_pool_ != nullptr && chunks > 1) {
    read_pool_->ParallelFor(chunks, look_up);
  } else {
    for (size_t c = 0; c < chunks; c++) look_up(c);
  }
  for (size_t j = 1; j < n; j++) {
    const uint32_t i = order[j], prev = order[j - 1];
    if (keys[i] != keys[prev]) continue;
    statuses[i] = statuses[prev];
    values[i] = values[prev];
    if (delete_keys != nullptr) delete_keys[i] = delete_keys[prev];
  }
}

void DBImpl::MultiGetFrom(const SuperVersion& sv, const ReadOptions& o, std::span<GetContext> ctxs) {
  std::array<GetContext*, kMultiGetChunk> rest;
  size_t left = 0;
  for (GetContext& ctx : ctxs) {
    for (const MemTable* m : sv.memtables()) {
      if (m != nullptr && !ctx.EndSource()) m->Get(&ctx);
    }
    if (!ctx.EndSource()) rest[left++] = &ctx;
  }
  if (left > 0) MultiGetFromFiles(*sv.files, table_cache_.get(), std::span<GetContext* const>(rest.data(), left), o.fill_cache);
}

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& o, ColumnFamilyHandle* cf) {
  Status s;
  ColumnFamilyData* cfd = ResolveForRead(cf, &s);
  if (cfd == nullptr) return NewDBIterator(std::make_unique<EmptyIterator>(s), 0, o, nullptr);
  SequenceNumber seq = 0;
  std::shared_ptr<const SuperVersion> sv = AcquireForRead(cfd, o, 0, 1, &seq).Share();
  sv = WithoutUnreadMemtable(std::move(sv), seq);
  if (sv == nullptr) return NewDBIterator(std::make_unique<EmptyIterator>(DroppedFamily(cf)), 0, o, nullptr);
  // Per source, newest first, its iterator and its range tombstones. A
  // memtable without entries adds no iterator (the iterator reads at `seq`,
  // so later writes are invisible to it anyway), which lets the merging layer
  // collapse when a single source remains; its tombstones still count.
  std::vector<std::unique_ptr<InternalIterator>> iters;
  std::vector<size_t> source_of;  // iters[i] reads source source_of[i]
  auto tombstones = std::make_shared<std::vector<TombstoneSource>>();
  for (const MemTable* m : sv->memtables()) {
    if (m == nullptr || m->empty()) continue;
    if (m->num_entries() > 0) {
      iters.push_back(m->NewIterator());
      source_of.push_back(tombstones->size());
    }
    tombstones->emplace_back();
    tombstones->back().Add(m->FragmentedRangeTombstones());
  }
  s = AddFileIterators(sv->files, table_cache_.get(), o.fill_cache, &iters, tombstones.get(), &source_of);
  if (!s.ok()) return NewDBIterator(std::make_unique<EmptyIterator>(s), 0, o, nullptr);
  SkipRangeDeleted(*tombstones, source_of, seq, &ticker(Ticker::kRangeDeleteSkips), &iters);
  const SecondaryDeletes* secondary = &sv->files->secondary;
  // The source iterators point into the tombstones: they live as long as the super version.
  auto pin = std::make_shared<PinnedSources>(
      PinnedSources{std::move(sv), std::move(tombstones), LiveCounter::Token(&open_iterators_)});
  return NewDBIterator(NewMergingIterator(std::move(iters)), seq, o, std::move(pin), secondary);
}

const Snapshot* DBImpl::GetSnapshot() {
  std::lock_guard<std::mutex> l(mu_);
  SequenceNumber seq = last_sequence_.load(std::memory_order_acquire);
  snapshots_.insert(seq);
  return new SnapshotImpl(seq);
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  if (snapshot == nullptr) return;
  std::lock_guard<std::mutex> l(mu_);
  auto it = snapshots_.find(snapshot->sequence());
  if (it != snapshots_.end()) snapshots_.erase(it);
  delete static_cast<const SnapshotImpl*>(snapshot);
  // Pages that the snapshot kept from being dropped may go now.
  for (const auto& [id, cfd] : cfds_) {
    if (!cfd->super_version->files->secondary.empty()) {
      page_drops_pending_ = true;
      bg_cv_.notify_all();
      break;
    }
  }
}

bool DBImpl::KeyMayExist(ColumnFamilyData* cfd, std::string_view key) {
  // The memtable holds this batch's earlier records too: the writer lock
  // keeps mem current; flushes swap mem, imm and files together.
  SuperVersionCache::Lease sv = cfd->super_versions.Acquire(0, 0);
  for (const MemTable* m : sv->memtables()) {
    if (m == nullptr) continue;
    GetContext ctx(key, kMaxSequenceNumber);
    m->Get(&ctx);
    if (ctx.saw_entry()) return true;
  }
  return FilesMayContain(*sv->files, key);
}

bool DBImpl::FilesMayContain(const ColumnFamilyFiles& files, std::string_view key, TableOpen open) {
  bool may_exist = false;
  ForEachFileContaining(files, key, [&](const FileRef& f) {
    FileReaders t;
    // Unreadable or not open: assume the key may be there (a tombstone is kept).
    may_exist = !OpenFileReaders(table_cache_.get(), *f, &t, open).ok() || t.table->MayContain(key, &t.overrides);
    return may_exist;
  });
  return may_exist;
}

std::vector<SequenceNumber> DBImpl::SnapshotList() {
  return std::vector<SequenceNumber>(snapshots_.begin(), snapshots_.end());
}

}  // namespace lethe
