#include "memtable/memtable.h"

#include <cstring>

#include "util/coding.h"
#include "util/hash.h"

namespace lethe {
namespace {

// Decodes the entry at p (arena layout in memtable.h).
struct DecodedEntry {
  std::string_view ikey;
  std::string_view value;
  uint64_t delete_key;
};

inline std::string_view DecodeIkey(const char* p) {
  uint32_t len;
  p = GetVarint32Ptr(p, p + 5, &len);
  return std::string_view(p, len);
}

inline DecodedEntry DecodeEntry(const char* p) {
  DecodedEntry e;
  e.ikey = DecodeIkey(p);
  const char* v = e.ikey.data() + e.ikey.size();
  uint32_t vlen;
  v = GetVarint32Ptr(v, v + 5, &vlen);
  e.value = std::string_view(v, vlen);
  e.delete_key = DecodeFixed64(v + vlen);
  return e;
}

// Encodes (key, seq) as a lookup key in the arena layout, on the stack or
// heap, so the table can compare it with entries.
class LookupKey {
 public:
  LookupKey(std::string_view key, SequenceNumber seq) {
    size_t ikey_len = key.size() + 8;
    size_t need = ikey_len + 5;
    char* dst = need <= sizeof(space_) ? space_ : (heap_ = std::make_unique<char[]>(need)).get();
    start_ = dst;
    dst = EncodeVarint32(dst, static_cast<uint32_t>(ikey_len));
    if (!key.empty()) std::memcpy(dst, key.data(), key.size());
    EncodeFixed64(dst + key.size(), PackTag(seq, kSeekKind));
  }
  const char* encoded() const { return start_; }

 private:
  char space_[200];
  std::unique_ptr<char[]> heap_;
  const char* start_;
};

}  // namespace

void MemTable::NoteSequence(SequenceNumber seq) {
  const SequenceNumber first = first_seq_.load(std::memory_order_relaxed);
  if (first == 0 || seq < first) first_seq_.store(seq, std::memory_order_relaxed);
}

int MemTable::EntryKeys::Compare(const char* a, const char* b) const {
  return CompareInternalKey(DecodeIkey(a), DecodeIkey(b));
}

std::string_view MemTable::EntryKeys::UserKey(const char* entry) const {
  return ExtractSortKey(DecodeIkey(entry));
}

void MemTable::Add(SequenceNumber seq, EntryKind kind, std::string_view key,
                   std::string_view value, uint64_t delete_key) {
  NoteSequence(seq);
  size_t ikey_len = key.size() + 8;
  size_t len = VarintLength(ikey_len) + ikey_len + VarintLength(value.size()) + value.size() + 8;
  if (expected_keys_ > 0) {
    const uint64_t hash = Hash64(key.data(), key.size());
    if (filter_owner_ == nullptr) {
      filter_owner_ = std::make_unique<KeyFilter>(expected_keys_);
      filter_.store(filter_owner_.get(), std::memory_order_release);
    }
    filter_owner_->Add(hash);  // before the entry is published
  }
  char* const entry = arena_.Allocate(len);
  char* p = EncodeVarint32(entry, static_cast<uint32_t>(ikey_len));
  if (!key.empty()) std::memcpy(p, key.data(), key.size());
  p += key.size();
  EncodeFixed64(p, PackTag(seq, kind));
  p += 8;
  p = EncodeVarint32(p, static_cast<uint32_t>(value.size()));
  if (!value.empty()) std::memcpy(p, value.data(), value.size());
  p += value.size();
  EncodeFixed64(p, delete_key);
  if (table_.Insert(entry)) num_keys_.fetch_add(1, std::memory_order_relaxed);
  num_entries_.fetch_add(1, std::memory_order_relaxed);
  if (kind == EntryKind::kTombstone) num_point_tombstones_.fetch_add(1, std::memory_order_relaxed);
}

void MemTable::AddKeyFilter() {
  if (filter_owner_ != nullptr || num_keys() == 0) return;
  filter_owner_ = std::make_unique<KeyFilter>(num_keys());
  std::unique_ptr<InternalIterator> it = NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view key = ExtractSortKey(it->key());
    filter_owner_->Add(Hash64(key.data(), key.size()));
  }
  filter_.store(filter_owner_.get(), std::memory_order_release);
}

void MemTable::AddRangeTombstone(SequenceNumber seq, std::string_view start,
                                 std::string_view end) {
  NoteSequence(seq);
  std::lock_guard<std::mutex> l(tombstones_mu_);
  tombstones_.push_back(RangeTombstone{std::string(start), std::string(end), seq});
  tombstone_bytes_.fetch_add(start.size() + end.size() + 64);
  num_range_tombstones_.fetch_add(1);
}

std::vector<RangeTombstone> MemTable::RangeTombstones() const {
  std::lock_guard<std::mutex> l(tombstones_mu_);
  return tombstones_;
}

std::shared_ptr<const FragmentedTombstones> MemTable::FragmentedRangeTombstones() const {
  if (!HasRangeTombstones()) return nullptr;
  std::lock_guard<std::mutex> l(tombstones_mu_);
  if (fragmented_count_ != tombstones_.size()) {
    fragmented_ = std::make_shared<const FragmentedTombstones>(tombstones_);
    fragmented_count_ = tombstones_.size();
  }
  return fragmented_;
}

void MemTable::Get(GetContext* ctx) const {
  if (HasRangeTombstones()) {
    ctx->AddCoveringTombstone(FragmentedRangeTombstones()->MaxCoveringSeq(ctx->key(), ctx->read_seq()));
  }
  const KeyFilter* filter = filter_.load(std::memory_order_acquire);
  if (filter != nullptr && !filter->MayContain(Hash64(ctx->key().data(), ctx->key().size()))) return;
  LookupKey lkey(ctx->key(), ctx->read_seq());
  Table::Iterator it(&table_);
  for (it.Seek(lkey.encoded()); it.Valid(); it.Next()) {
    DecodedEntry e = DecodeEntry(it.key());
    if (ExtractSortKey(e.ikey) != ctx->key()) break;
    uint64_t tag = ExtractTag(e.ikey);
    if (ctx->SaveEntry(TagSequence(tag), TagKind(tag), e.value, e.delete_key)) break;
  }
}

class MemTable::Iter final : public InternalIterator {
 public:
  explicit Iter(const Table* table) : it_(table) {}
  bool Valid() const override { return it_.Valid(); }
  void SeekToFirst() override {
    it_.SeekToFirst();
    Decode();
  }
  void SeekToLast() override {
    it_.SeekToLast();
    Decode();
  }
  void Seek(std::string_view internal_key) override {
    scratch_.clear();
    PutVarint32(&scratch_, static_cast<uint32_t>(internal_key.size()));
    scratch_.append(internal_key);
    it_.Seek(scratch_.data());
    Decode();
  }
  void Next() override {
    it_.Next();
    Decode();
  }
  void Prev() override {
    it_.Prev();
    Decode();
  }
  std::string_view key() const override { return entry_.ikey; }
  std::string_view value() const override { return entry_.value; }
  uint64_t delete_key() const override { return entry_.delete_key; }
  Status status() const override { return Status::OK(); }

 private:
  void Decode() {
    if (it_.Valid()) entry_ = DecodeEntry(it_.key());
  }
  Table::Iterator it_;
  DecodedEntry entry_{};
  std::string scratch_;
};

std::unique_ptr<InternalIterator> MemTable::NewIterator() const {
  return std::make_unique<Iter>(&table_);
}

}  // namespace lethe
