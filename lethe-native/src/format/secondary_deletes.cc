#include "format/secondary_deletes.h"

#include "util/coding.h"

namespace lethe {

EntryFate SecondaryDeletes::FateOf(SequenceNumber seq, EntryKind kind, uint64_t dk,
                                   SequenceNumber first_reader) const {
  const bool tombstone = kind == EntryKind::kTombstone;
  if (empty() || (tombstone && dk == kMaxDeleteKey)) return EntryFate{};
  const SequenceNumber from = HiddenFrom(seq, dk);
  const SequenceNumber by_horizon = HorizonHiddenFrom(dk);
  const bool hidden = from != kMaxSequenceNumber && from <= first_reader;
  const bool under_horizon = by_horizon != kMaxSequenceNumber && by_horizon <= first_reader;
  EntryFate fate;
  fate.pinned = from != kMaxSequenceNumber && from > first_reader;
  if (tombstone) {
    if (under_horizon && hidden) fate.action = EntryFate::kDrop;
  } else if (hidden) {
    fate.action = under_horizon ? EntryFate::kDrop : EntryFate::kTombstone;
  }
  return fate;
}

uint64_t SecondaryDeletes::InvalidationTime(SequenceNumber applied_seq, SequenceNumber smallest_seq,
                                            uint64_t dk_min, uint64_t dk_max) const {
  uint64_t t = 0;
  auto earlier = [&t](uint64_t x) {
    if (x != 0 && (t == 0 || x < t)) t = x;
  };
  // The first horizon above dk_min among those not applied yet (both
  // orders agree: horizons ascend by sequence and by value).
  auto by_key = std::upper_bound(horizons.begin(), horizons.end(), dk_min,
                                 [](uint64_t k, const HorizonRecord& r) { return k < r.horizon; });
  auto by_seq = std::upper_bound(horizons.begin(), horizons.end(), applied_seq,
                                 [](SequenceNumber s, const HorizonRecord& r) { return s < r.seq; });
  auto it = std::max(by_key, by_seq);
  if (it != horizons.end()) earlier(it->time_us);
  for (const DeleteKeyRangeRecord& r : ranges) {
    if (applied_seq < r.seq && smallest_seq < r.seq && r.lo <= dk_max && dk_min <= r.hi && dk_min != kMaxDeleteKey) {
      earlier(r.time_us);
    }
  }
  return t;
}

// count varint | (seq varint64 | horizon fixed64 | time varint64)* |
// count varint | (seq varint64 | lo fixed64 | hi fixed64 | time varint64)*
void SecondaryDeletes::EncodeTo(std::string* dst) const {
  PutVarint64(dst, horizons.size());
  for (const HorizonRecord& r : horizons) {
    PutVarint64(dst, r.seq);
    PutFixed64(dst, r.horizon);
    PutVarint64(dst, r.time_us);
  }
  PutVarint64(dst, ranges.size());
  for (const DeleteKeyRangeRecord& r : ranges) {
    PutVarint64(dst, r.seq);
    PutFixed64(dst, r.lo);
    PutFixed64(dst, r.hi);
    PutVarint64(dst, r.time_us);
  }
}

Status SecondaryDeletes::DecodeFrom(std::string_view in) {
  *this = SecondaryDeletes();
  uint64_t n;
  if (!GetVarint64(&in, &n) || n > in.size()) return Status::Corruption("manifest: bad horizon count");
  for (uint64_t i = 0; i < n; i++) {
    HorizonRecord r;
    if (!GetVarint64(&in, &r.seq) || !GetFixed64(&in, &r.horizon) || !GetVarint64(&in, &r.time_us)) {
      return Status::Corruption("manifest: bad horizon record");
    }
    if (!horizons.empty() && (r.seq <= horizons.back().seq || r.horizon < horizons.back().horizon)) {
      return Status::Corruption("manifest: horizons not ascending");
    }
    horizons.push_back(r);
  }
  if (!GetVarint64(&in, &n) || n > in.size()) return Status::Corruption("manifest: bad delete-key range count");
  for (uint64_t i = 0; i < n; i++) {
    DeleteKeyRangeRecord r;
    if (!GetVarint64(&in, &r.seq) || !GetFixed64(&in, &r.lo) || !GetFixed64(&in, &r.hi) ||
        !GetVarint64(&in, &r.time_us)) {
      return Status::Corruption("manifest: bad delete-key range record");
    }
    if (r.hi < r.lo || (!ranges.empty() && r.seq <= ranges.back().seq)) {
      return Status::Corruption("manifest: bad delete-key range record order");
    }
    ranges.push_back(r);
  }
  if (!in.empty()) return Status::Corruption("manifest: trailing bytes after secondary deletes");
  return Status::OK();
}

}  // namespace lethe
