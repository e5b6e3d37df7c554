// SuperVersionCache: per-thread slots (super_version.h).
#include "db/super_version.h"

#include <set>
#include <unordered_map>

namespace lethe {

struct SuperVersionCache::Ref {
  std::shared_ptr<const SuperVersion> sv;
  uint64_t number = 0;
};

// Written by its thread alone, except that Install takes back its Ref.
struct alignas(64) SuperVersionCache::Slot {
  std::atomic<Ref*> ref{nullptr};
  std::atomic<uint64_t> point_lookups{0}, range_lookups{0};
  std::atomic<bool> owned{true};  // false once its thread ended: a new thread may take it
};

namespace {

// A slot holding this marker is being read from.
SuperVersionCache::Ref* InUse() {
  static SuperVersionCache::Ref marker;
  return &marker;
}

// The caches alive, so that an ending thread only touches live slots. Never
// destroyed: threads may end after static destruction began.
struct Registry {
  std::mutex mu;
  std::set<uint64_t> live;
  uint64_t next_id = 1;
};
Registry& TheRegistry() {
  static Registry* r = new Registry();
  return *r;
}

// The calling thread's slot in each cache it read, by cache id.
struct ThreadSlots {
  uint64_t last_id = 0;
  SuperVersionCache::Slot* last = nullptr;
  std::unordered_map<uint64_t, SuperVersionCache::Slot*> slots;

  ~ThreadSlots() {
    Registry& r = TheRegistry();
    std::lock_guard<std::mutex> l(r.mu);
    for (auto& [id, slot] : slots) {
      if (r.live.count(id) != 0) slot->owned.store(false, std::memory_order_release);
    }
  }
  // Forgets the slots of caches that are gone.
  void Prune() {
    Registry& r = TheRegistry();
    std::lock_guard<std::mutex> l(r.mu);
    std::erase_if(slots, [&](const auto& e) { return r.live.count(e.first) == 0; });
    last_id = 0;
    last = nullptr;
  }
};
thread_local ThreadSlots this_thread_slots;

constexpr size_t kPruneAbove = 64;

}  // namespace

const SuperVersion* SuperVersionCache::Lease::get() const { return ref_->sv.get(); }
std::shared_ptr<const SuperVersion> SuperVersionCache::Lease::Share() const { return ref_->sv; }

SuperVersionCache::SuperVersionCache()
    : id_([] {
        Registry& r = TheRegistry();
        std::lock_guard<std::mutex> l(r.mu);
        uint64_t id = r.next_id++;
        r.live.insert(id);
        return id;
      }()) {}

SuperVersionCache::~SuperVersionCache() {
  {
    Registry& r = TheRegistry();
    std::lock_guard<std::mutex> l(r.mu);
    r.live.erase(id_);
  }
  for (auto& slot : slots_) {
    Ref* ref = slot->ref.load(std::memory_order_acquire);
    if (ref != InUse()) delete ref;
  }
}

void SuperVersionCache::Install(std::shared_ptr<const SuperVersion> sv) {
  {
    std::lock_guard<std::mutex> l(current_mu_);
    current_ = std::move(sv);
    number_.fetch_add(1, std::memory_order_release);
  }
  Scrape();
}

void SuperVersionCache::Clear() { Install(nullptr); }

void SuperVersionCache::Scrape() {
  std::vector<Ref*> old;
  {
    std::lock_guard<std::mutex> l(slots_mu_);
    for (auto& slot : slots_) {
      // A slot in use becomes empty: its reader sees that when it gives the
      // super version back, and drops it instead.
      Ref* ref = slot->ref.exchange(nullptr, std::memory_order_acq_rel);
      if (ref != nullptr && ref != InUse()) old.push_back(ref);
    }
  }
  for (Ref* ref : old) delete ref;
}

SuperVersionCache::Slot* SuperVersionCache::ThisThreadSlot() {
  ThreadSlots& t = this_thread_slots;
  if (t.last_id == id_) return t.last;
  auto it = t.slots.find(id_);
  Slot* slot = it == t.slots.end() ? nullptr : it->second;
  if (slot == nullptr) {
    {
      std::lock_guard<std::mutex> l(slots_mu_);
      for (auto& s : slots_) {
        bool owned = false;
        if (s->owned.compare_exchange_strong(owned, true, std::memory_order_acq_rel)) {
          slot = s.get();
          break;
        }
      }
      if (slot == nullptr) {
        slots_.push_back(std::make_unique<Slot>());
        slot = slots_.back().get();
      }
    }
    if (t.slots.size() >= kPruneAbove) t.Prune();
    t.slots.emplace(id_, slot);
  }
  t.last_id = id_;
  t.last = slot;
  return slot;
}

SuperVersionCache::Ref* SuperVersionCache::Fetch() {
  std::lock_guard<std::mutex> l(current_mu_);
  return new Ref{current_, number_.load(std::memory_order_relaxed)};
}

SuperVersionCache::Lease SuperVersionCache::Acquire(uint64_t point_lookups, uint64_t range_lookups) {
  Slot* slot = ThisThreadSlot();
  // Only this thread writes its counters: no read-modify-write needed.
  if (point_lookups != 0) slot->point_lookups.store(slot->point_lookups.load(std::memory_order_relaxed) + point_lookups, std::memory_order_relaxed);
  if (range_lookups != 0) slot->range_lookups.store(slot->range_lookups.load(std::memory_order_relaxed) + range_lookups, std::memory_order_relaxed);
  Ref* ref = slot->ref.exchange(InUse(), std::memory_order_acquire);
  if (ref == InUse()) return Lease(this, nullptr, Fetch());  // a read within a read
  if (ref != nullptr && ref->number == number_.load(std::memory_order_acquire)) return Lease(this, slot, ref);
  delete ref;
  return Lease(this, slot, Fetch());
}

SuperVersionCache::Lease SuperVersionCache::Acquire(uint64_t point_lookups, uint64_t range_lookups,
                                                    const std::atomic<uint64_t>& sequence, uint64_t* seq) {
  while (true) {
    Lease lease = Acquire(point_lookups, range_lookups);
    *seq = sequence.load(std::memory_order_acquire);
    if (lease.ref_->number == number_.load(std::memory_order_acquire)) return lease;
    point_lookups = range_lookups = 0;  // counted once
  }
}

void SuperVersionCache::Release(Slot* slot, Ref* ref) {
  Ref* expected = InUse();
  if (slot == nullptr ||
      !slot->ref.compare_exchange_strong(expected, ref, std::memory_order_release, std::memory_order_relaxed)) {
    delete ref;  // taken back by Install meanwhile: the copy is out of date
  }
}

uint64_t SuperVersionCache::PointLookups() const {
  std::lock_guard<std::mutex> l(slots_mu_);
  uint64_t n = 0;
  for (auto& s : slots_) n += s->point_lookups.load(std::memory_order_relaxed);
  return n;
}

uint64_t SuperVersionCache::RangeLookups() const {
  std::lock_guard<std::mutex> l(slots_mu_);
  uint64_t n = 0;
  for (auto& s : slots_) n += s->range_lookups.load(std::memory_order_relaxed);
  return n;
}

}  // namespace lethe
