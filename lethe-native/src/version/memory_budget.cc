#include "version/memory_budget.h"

#include <algorithm>

namespace lethe {

namespace {
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kMinCapacity = size_t{64} << 10;
}

Status MemoryBudget::New(size_t capacity_bytes, double write_buffer_ratio, std::shared_ptr<MemoryBudget>* result,
                         bool bound_table_readers) {
  if (capacity_bytes < kMinCapacity) return Status::InvalidArgument("memory budget: capacity must be at least 64 KiB");
  if (!(write_buffer_ratio > 0 && write_buffer_ratio < 1)) {
    return Status::InvalidArgument("memory budget: write_buffer_ratio must be in (0, 1)");
  }
  *result = MemoryBudgetImpl::Shared(capacity_bytes, write_buffer_ratio, bound_table_readers);
  return Status::OK();
}

MemoryBudgetImpl::MemoryBudgetImpl(bool shared, size_t capacity, size_t write_buffer_limit, bool bound_readers)
    : shared_(shared), capacity_(capacity), write_buffer_limit_(write_buffer_limit),
      pinned_limit_(!shared ? 0 : bound_readers ? (capacity - write_buffer_limit) / 2 : SIZE_MAX),
      whole_index_limit_((capacity - write_buffer_limit) / 4 * 3) {
  if (capacity_ > 0) pages_ = std::make_unique<PageCache>(capacity_);
  // A reader in use is held by its user: the bound can be strict.
  if (shared_) readers_ = std::make_unique<TableReaderCache>((capacity_ - write_buffer_limit_) / 4 * 3, false);
}

std::shared_ptr<MemoryBudgetImpl> MemoryBudgetImpl::Shared(size_t capacity, double write_buffer_ratio,
                                                           bool bound_readers) {
  auto limit = static_cast<size_t>(static_cast<double>(capacity) * write_buffer_ratio);
  return std::shared_ptr<MemoryBudgetImpl>(new MemoryBudgetImpl(true, capacity, limit, bound_readers));
}

std::shared_ptr<MemoryBudgetImpl> MemoryBudgetImpl::Fixed(size_t page_cache_bytes) {
  return std::shared_ptr<MemoryBudgetImpl>(new MemoryBudgetImpl(false, page_cache_bytes, 0, false));
}

std::shared_ptr<const TableReader> MemoryBudgetImpl::Track(std::unique_ptr<TableReader> r, bool want_pin,
                                                           bool* pinned) {
  const size_t bytes = r->MemoryUsage();
  {
    std::lock_guard<std::mutex> l(mu_);
    *pinned = shared_ ? want_pin && bytes <= pinned_limit_ - pinned_ : want_pin;
    table_readers_ += bytes;
    if (*pinned) pinned_ += bytes;
    ReserveLocked();
  }
  if (*pinned) SetReadersReserved();
  return std::shared_ptr<const TableReader>(r.release(), ReaderCharge{shared_from_this(), bytes, *pinned});
}

bool MemoryBudgetImpl::Promote(const std::shared_ptr<const TableReader>& r) {
  auto* charge = std::get_deleter<ReaderCharge>(r);
  if (charge == nullptr) return false;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (charge->pinned || charge->bytes > pinned_limit_ - pinned_) return charge->pinned;
    charge->pinned = true;
    pinned_ += charge->bytes;
  }
  SetReadersReserved();
  return true;
}

bool MemoryBudgetImpl::RoomForWholeIndex(size_t bytes) const {
  if (!shared_) return true;
  std::lock_guard<std::mutex> l(mu_);
  return bytes <= whole_index_limit_ && pinned_ <= whole_index_limit_ - bytes;
}

void MemoryBudgetImpl::ReaderCharge::operator()(const TableReader* r) {
  delete r;
  bool was_pinned;
  {
    std::lock_guard<std::mutex> l(budget->mu_);
    was_pinned = pinned;
    budget->table_readers_ -= bytes;
    if (pinned) budget->pinned_ -= bytes;
    budget->ReserveLocked();
  }
  if (was_pinned) budget->SetReadersReserved();
}

// Outside mu_: readers the cache evicts give their memory back under it.
void MemoryBudgetImpl::SetReadersReserved() {
  if (readers_) readers_->SetReserved(pinned_.load());
}

void MemoryBudgetImpl::ReserveLocked() {
  if (!shared_ || pages_ == nullptr) return;
  // In whole MiB: a write does not touch the page cache's shards. Pages
  // keep at least an eighth of the capacity.
  size_t want = std::min((write_buffers_ + table_readers_ + kMiB - 1) / kMiB * kMiB, capacity_ - capacity_ / 8);
  if (want == reserved_) return;
  reserved_ = want;
  squeezed_.fetch_add(pages_->SetReserved(want), std::memory_order_relaxed);
}

bool MemoryBudgetImpl::SqueezedEnoughToTrim() const {
  return squeezed_.load(std::memory_order_relaxed) >= std::max(capacity_ / 16, kMiB);
}

void MemoryBudgetImpl::ForgetNamespace(uint64_t ns) {
  if (!shared_) return;
  constexpr uint64_t kMask = ~((uint64_t{1} << 40) - 1);
  auto mine = [ns](const CacheKey& k) { return (k.hi & kMask) == ns; };
  if (readers_) readers_->EraseIf(mine);
  if (pages_) pages_->EraseIf(mine);
}

std::shared_ptr<WriteBufferShare> MemoryBudgetImpl::NewWriteBufferShare(std::function<void()> wake) {
  auto share = std::make_shared<WriteBufferShare>();
  share->budget_ = shared_from_this();
  share->wake_ = std::move(wake);
  std::lock_guard<std::mutex> l(mu_);
  shares_.push_back(ShareRef{share.get(), share});
  return share;
}

void MemoryBudgetImpl::Charge(WriteBufferShare* w, size_t bytes) {
  std::shared_ptr<WriteBufferShare> flush;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (w->gone_) return;
    w->active_ += bytes;
    write_buffers_ += bytes;
    if (!w->requested_.load(std::memory_order_relaxed)) mutable_unrequested_ += bytes;
    ReserveLocked();
    if (shared_) flush = PickFlushLocked();
  }
  if (flush) Wake(flush);
}

std::shared_ptr<WriteBufferShare> MemoryBudgetImpl::PickFlushLocked() {
  const bool due = mutable_unrequested_ > write_buffer_limit_ / 8 * 7 ||
                   (write_buffers_ > write_buffer_limit_ && mutable_unrequested_ >= write_buffer_limit_ / 2);
  if (!due) return nullptr;
  std::shared_ptr<WriteBufferShare> best;
  for (const ShareRef& ref : shares_) {
    WriteBufferShare* s = ref.share;
    if (s->requested_.load(std::memory_order_relaxed) || s->active_ == 0) continue;
    if (best == nullptr || s->active_ > best->active_) {
      if (auto owner = ref.owner.lock()) best = std::move(owner);
    }
  }
  if (best == nullptr) return nullptr;
  best->requested_.store(true, std::memory_order_release);
  mutable_unrequested_ -= best->active_;
  return best;
}

void MemoryBudgetImpl::Wake(const std::shared_ptr<WriteBufferShare>& w) {
  std::lock_guard<std::mutex> l(w->wake_mu_);
  if (!w->closed_ && w->wake_) w->wake_();
}

void MemoryBudgetImpl::Switched(WriteBufferShare* w, size_t uncharged) {
  std::lock_guard<std::mutex> l(mu_);
  if (w->gone_) return;
  if (!w->requested_.exchange(false, std::memory_order_acq_rel)) mutable_unrequested_ -= w->active_;
  write_buffers_ += uncharged;
  w->immutable_ += w->active_ + uncharged;
  w->active_ = 0;
  ReserveLocked();
}

std::shared_ptr<void> MemoryBudgetImpl::Flushed(WriteBufferShare* w, size_t resident) {
  size_t flushed;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (w->gone_) return nullptr;
    // The flush's inputs (the old residents among them) stay charged until
    // freed; the residents it keeps are charged anew.
    flushed = w->immutable_;
    flushed_held_ += flushed;
    write_buffers_ += resident;
    w->immutable_ = resident;
    w->resident_ = resident;
    ReserveLocked();
  }
  return std::shared_ptr<void>(nullptr, [budget = shared_from_this(), flushed](void*) { budget->Freed(flushed); });
}

void MemoryBudgetImpl::Freed(size_t bytes) {
  std::lock_guard<std::mutex> l(mu_);
  write_buffers_ -= bytes;
  flushed_held_ -= bytes;
  ReserveLocked();
}

size_t MemoryBudgetImpl::ResidentRoom(const WriteBufferShare& w) const {
  if (!shared_) return SIZE_MAX;
  std::lock_guard<std::mutex> l(mu_);
  size_t others = 0;
  for (const ShareRef& ref : shares_) {
    if (ref.share != &w) others += ref.share->resident_;
  }
  return write_buffer_limit_ / 4 > others ? write_buffer_limit_ / 4 - others : 0;
}

void MemoryBudgetImpl::Unregister(WriteBufferShare* w) {
  std::lock_guard<std::mutex> l(mu_);
  if (!w->requested_.exchange(false, std::memory_order_acq_rel)) mutable_unrequested_ -= w->active_;
  write_buffers_ -= w->active_ + w->immutable_;
  w->active_ = w->immutable_ = w->resident_ = 0;
  w->gone_ = true;
  shares_.erase(std::remove_if(shares_.begin(), shares_.end(), [w](const ShareRef& r) { return r.share == w; }),
                shares_.end());
  ReserveLocked();
}

MemoryBudget::Usage MemoryBudgetImpl::GetUsage() const {
  Usage u;
  u.capacity = capacity_;
  if (pages_) u.page_cache = pages_->usage();
  std::lock_guard<std::mutex> l(mu_);
  u.write_buffers = write_buffers_;
  u.flushed_write_buffers = flushed_held_;
  u.table_readers = table_readers_;
  u.pinned_table_readers = pinned_;
  return u;
}

void WriteBufferShare::Charge(size_t bytes) { budget_->Charge(this, bytes); }
void WriteBufferShare::Switched(size_t uncharged) { budget_->Switched(this, uncharged); }
std::shared_ptr<void> WriteBufferShare::Flushed(size_t resident) { return budget_->Flushed(this, resident); }

void WriteBufferShare::Close() {
  {
    std::lock_guard<std::mutex> l(wake_mu_);
    if (closed_) return;
    closed_ = true;
    wake_ = nullptr;
  }
  if (budget_) budget_->Unregister(this);
}

}  // namespace lethe
