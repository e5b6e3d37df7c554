#include "compaction/compaction_stream.h"

#include <algorithm>
#include <optional>

namespace lethe {

CompactionStream::CompactionStream(InternalIterator* input,
                                   const std::vector<RangeTombstone>& tombstones,
                                   std::vector<SequenceNumber> snapshots,
                                   std::function<bool(std::string_view, std::string_view)> deeper_data,
                                   const SecondaryDeletes* secondary)
    : input_(input), fragments_(tombstones), snapshots_(std::move(snapshots)),
      deeper_data_(std::move(deeper_data)),
      secondary_(secondary != nullptr && !secondary->empty() ? secondary : nullptr),
      oldest_range_record_(secondary_ != nullptr && !secondary_->ranges.empty() ? secondary_->ranges.front().seq
                                                                                 : kMaxSequenceNumber) {
  std::sort(snapshots_.begin(), snapshots_.end());
}

size_t CompactionStream::Stripe(SequenceNumber seq) const {
  return static_cast<size_t>(std::lower_bound(snapshots_.begin(), snapshots_.end(), seq) -
                             snapshots_.begin());
}

const FragmentedTombstones::Fragment* CompactionStream::FragmentAt(std::string_view key) {
  const auto& frags = fragments_.fragments();
  while (fragment_cursor_ < frags.size() && frags[fragment_cursor_].end <= key) fragment_cursor_++;
  if (fragment_cursor_ == frags.size() || key < frags[fragment_cursor_].start) return nullptr;
  return &frags[fragment_cursor_];
}

bool CompactionStream::Covered(std::string_view key, SequenceNumber seq, size_t stripe) {
  const FragmentedTombstones::Fragment* fragment = FragmentAt(key);
  if (fragment == nullptr) return false;
  SequenceNumber upper = stripe < snapshots_.size() ? snapshots_[stripe] : kMaxSequenceNumber;
  for (SequenceNumber t : fragment->seqs) {  // descending
    if (t <= seq) break;
    if (t <= upper) return true;
  }
  return false;
}

void CompactionStream::RemoveHidden(std::string_view key) {
  size_t out = 0;
  for (size_t k = 0; k < versions_.size(); k++) {
    Version& v = versions_[k];
    // The earliest reader that can see this version; the current state (no
    // snapshot above) sees every record that exists.
    const size_t stripe = Stripe(v.seq);
    const SequenceNumber reader = stripe < snapshots_.size() ? snapshots_[stripe] : kMaxSequenceNumber;
    const EntryFate fate = secondary_->FateOf(v.seq, v.kind, v.delete_key, reader);
    if (fate.action != EntryFate::kKeep) {
      stats_.secondary_removed++;
      stats_.secondary_removed_bytes += key.size() + v.value.size();
    }
    if (fate.action == EntryFate::kDrop) continue;
    if (fate.action == EntryFate::kTombstone) {
      v.kind = EntryKind::kTombstone;
      v.value.clear();
      v.delete_key = kMaxDeleteKey;
    }
    if (out != k) versions_[out] = std::move(v);
    out++;
  }
  versions_.resize(out);
}

bool CompactionStream::NextKey(std::vector<OutputEntry>* out) {
  if (!started_) {
    input_->SeekToFirst();
    started_ = true;
  }
  if (!input_->Valid() || !status_.ok()) return false;

  std::string key(ExtractSortKey(input_->key()));
  versions_.clear();
  while (input_->Valid() && ExtractSortKey(input_->key()) == key) {
    uint64_t tag = ExtractTag(input_->key());
    versions_.push_back(Version{TagSequence(tag), TagKind(tag), std::string(input_->value()),
                                input_->delete_key()});
    input_->Next();
  }
  stats_.input_entries += versions_.size();
#ifdef LETHE_INVARIANT_CHECKS
  // The monotone delete-key contract: between tombstones, an older version
  // never carries a larger delete key than a newer one, and a tombstone with a
  // delete key carries at least the one of the version it deletes.
  for (size_t k = 1; k < versions_.size(); k++) {
    const Version& newer = versions_[k - 1];
    const Version& older = versions_[k];
    if (older.kind != EntryKind::kTombstone && older.delete_key > newer.delete_key) {
      status_ = Status::Corruption("invariant: delete key of a newer version is smaller than an older one's",
                                   key);
      return false;
    }
  }
#endif
  if (secondary_ != nullptr) RemoveHidden(key);
  size_t emitted_before = out->size();
  // Asked once, and only when the answer matters (a tombstone, or a merge
  // chain with nothing older in its stripe): a flush answers it from files.
  std::optional<bool> deeper_known;
  auto deeper = [&] {
    if (!deeper_known) deeper_known = deeper_data_(key, key);
    return *deeper_known;
  };

  // See ZeroOldSequences; the cheap tests first.
  auto zero = [&](SequenceNumber seq, EntryKind kind) {
    return zero_old_sequences_ && kind == EntryKind::kValue && seq < oldest_range_record_ && Stripe(seq) == 0 &&
           FragmentAt(key) == nullptr && !deeper();
  };
  auto emit = [&](SequenceNumber seq, EntryKind kind, std::string value, uint64_t dk) {
    if (seq != 0 && zero(seq, kind)) seq = 0;
    out->push_back(OutputEntry{MakeInternalKey(key, seq, kind), std::move(value), dk});
  };
  // Emits a merge chain (operands newest first, then an optional base value).
  // Entries fold only with neighbours of the same delete key: a secondary
  // delete removes single entries, so entries that one could remove and not
  // the other stay apart. `closed`: nothing older is visible below the chain
  // (a tombstone, a cut, or no older data), so its oldest part is a value.
  auto emit_chain = [&](const std::vector<const Version*>& operands, const Version* base, bool closed) {
    size_t a = 0;
    while (a < operands.size()) {
      size_t b = a + 1;
      while (b < operands.size() && operands[b]->delete_key == operands[a]->delete_key) b++;
      const bool last_group = b == operands.size();
      const bool with_base = last_group && base != nullptr && base->delete_key == operands[a]->delete_key;
      std::string v;
      bool empty = true;
      if (with_base) {
        v = base->value;
        empty = false;
      }
      for (size_t k = b; k-- > a;) {
        AppendMergeOperand(&v, empty, operands[k]->value);
        empty = false;
      }
      const bool value = with_base || (last_group && base == nullptr && closed);
      emit(operands[a]->seq, value ? EntryKind::kValue : EntryKind::kMerge, std::move(v),
           operands[a]->delete_key);
      if (with_base) return;
      a = b;
    }
    if (base != nullptr) emit(base->seq, EntryKind::kValue, base->value, base->delete_key);
  };

  size_t i = 0, n = versions_.size();
  while (i < n) {
    size_t stripe = Stripe(versions_[i].seq);
    std::vector<const Version*> operands;
    bool resolved = false;
    size_t j = i;
    for (; j < n && Stripe(versions_[j].seq) == stripe; j++) {
      if (resolved) continue;  // hidden inside the stripe
      const Version& v = versions_[j];
      bool covered = Covered(key, v.seq, stripe);
      if (covered || v.kind == EntryKind::kTombstone) {
        if (!operands.empty()) {
          emit_chain(operands, nullptr, /*closed=*/true);
        } else if (!covered) {
          // Keep the tombstone while anything older may still be shadowed.
          bool older_in_input = false;
          for (size_t k = j + 1; k < n; k++) {
            if (Stripe(versions_[k].seq) != stripe) {
              older_in_input = true;
              break;
            }
          }
          if (older_in_input || deeper()) {
            emit(v.seq, EntryKind::kTombstone, std::string(), v.delete_key);
          } else {
            stats_.dropped_point_tombstones++;
          }
        }
        resolved = true;
      } else if (v.kind == EntryKind::kValue) {
        emit_chain(operands, &v, /*closed=*/true);
        resolved = true;
      } else {
        operands.push_back(&v);
      }
    }
    if (!resolved && !operands.empty()) {
      // No base in this stripe: a value if nothing older can exist anywhere.
      emit_chain(operands, nullptr, /*closed=*/!(j < n || deeper()));
    }
    i = j;
  }
  stats_.dropped_entries += versions_.size() - (out->size() - emitted_before);
  return true;
}

std::vector<RangeTombstone> CompactionStream::OutputTombstones() {
  std::vector<RangeTombstone> result;
  for (const auto& f : fragments_.fragments()) {
    size_t last_stripe = SIZE_MAX;
    for (SequenceNumber t : f.seqs) {  // newest first
      size_t stripe = Stripe(t);
      if (stripe == last_stripe) {
        stats_.dropped_range_tombstones++;
        continue;  // an older tombstone in the same stripe adds nothing
      }
      last_stripe = stripe;
      if (stripe == 0 && !deeper_data_(f.start, f.end)) {
        stats_.dropped_range_tombstones++;
        continue;  // visible to everyone and nothing beneath to delete
      }
      result.push_back(RangeTombstone{f.start, f.end, t});
    }
  }
  return result;
}

}  // namespace lethe
