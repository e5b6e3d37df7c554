// GetContext: resolves a point lookup while the sources of a column family
// are visited newest first (memtables, level 0 files newest first, then one
// file per deeper level).
//
// Invariant relied on: for a given sort key, every entry and every covering
// range tombstone in a newer source has a larger sequence number than those
// in an older source. So a tombstone seen in a source covers only entries of
// that source and older ones, and the sequence comparison decides.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/internal_key.h"
#include "lethe/options.h"
#include "lethe/status.h"
#include "format/secondary_deletes.h"

namespace lethe {

class GetContext {
 public:
  // `secondary` (may be null) hides entries under secondary deletes: a
  // hidden entry acts as a point tombstone (secondary_deletes.h).
  GetContext(std::string_view key, SequenceNumber read_seq,
             const SecondaryDeletes* secondary = nullptr)
      : key_(key), read_seq_(read_seq),
        secondary_(secondary != nullptr && !secondary->empty() ? secondary : nullptr) {}

  std::string_view key() const { return key_; }
  SequenceNumber read_seq() const { return read_seq_; }
  bool done() const { return state_ != State::kSearching; }
  // Whether any entry of the key (value, tombstone or operand) was seen.
  bool saw_entry() const { return done() || !operands_.empty(); }

  // A source's newest range tombstone covering the key (0 if none); called
  // before the source's point entries.
  void AddCoveringTombstone(SequenceNumber seq) {
    if (seq > tombstone_seq_) tombstone_seq_ = seq;
  }

  // After a source's entries. A covering tombstone from this source or a
  // newer one is newer than every entry of the key in the older sources (the
  // invariant above): they are all deleted, so the lookup ends here, without
  // reading them. Returns done().
  bool EndSource() {
    if (!done() && tombstone_seq_ > 0) state_ = operands_.empty() ? State::kDeleted : State::kFound;
    return done();
  }

  // Feeds one point entry of the key (REQUIRES seq <= read_seq, entries of a
  // source newest first). Returns true when the lookup is resolved. A value
  // is kept as a view until Finish: `pin` (may be null) holds the memory it
  // points into; without a pin, that memory must outlive Finish (a
  // memtable's, which the caller's super version holds).
  bool SaveEntry(SequenceNumber seq, EntryKind kind, std::string_view value, uint64_t delete_key,
                 const std::shared_ptr<const void>& pin = nullptr) {
    if (seq < tombstone_seq_) kind = EntryKind::kTombstone;  // under a range tombstone
    if (secondary_ != nullptr && secondary_->Hides(seq, kind, delete_key, read_seq_)) {
      kind = EntryKind::kTombstone;
    }
    if (!have_delete_key_ && kind != EntryKind::kTombstone) {
      delete_key_ = delete_key;  // the newest contributing entry's delete key
      have_delete_key_ = true;
    }
    switch (kind) {
      case EntryKind::kValue:
        base_ = value;
        base_pin_ = pin;
        state_ = State::kFound;
        break;
      case EntryKind::kTombstone:
        state_ = operands_.empty() ? State::kDeleted : State::kFound;
        break;
      case EntryKind::kMerge:
        operands_.emplace_back(value);
        break;
      default:
        state_ = State::kCorrupt;
        break;
    }
    return done();
  }

  // Ends the lookup with an error (a source that could not be read), which
  // Finish returns.
  void Fail(Status error) {
    error_ = std::move(error);
    state_ = State::kFailed;
  }

  // After every source was visited (or done()): the value, NotFound,
  // Corruption, or the error the lookup failed with.
  Status Finish(std::string* value, uint64_t* delete_key) {
    if (state_ == State::kFailed) return error_;
    if (state_ == State::kCorrupt) return Status::Corruption("unknown entry kind for key");
    if (state_ == State::kDeleted || (state_ == State::kSearching && operands_.empty())) {
      return Status::NotFound("");
    }
    // Found: base value (if any) followed by operands oldest first.
    value->clear();
    bool empty = true;
    if (state_ == State::kFound && base_.has_value()) {
      value->assign(base_->data(), base_->size());
      empty = false;
    }
    for (auto it = operands_.rbegin(); it != operands_.rend(); ++it) {
      AppendMergeOperand(value, empty, *it);
      empty = false;
    }
    if (delete_key != nullptr) *delete_key = delete_key_;
    return Status::OK();
  }

 private:
  enum class State { kSearching, kFound, kDeleted, kCorrupt, kFailed };

  std::string_view key_;
  SequenceNumber read_seq_;
  const SecondaryDeletes* secondary_;
  SequenceNumber tombstone_seq_ = 0;
  State state_ = State::kSearching;
  std::optional<std::string_view> base_;
  std::shared_ptr<const void> base_pin_;  // keeps base_'s memory alive
  std::vector<std::string> operands_;  // newest first
  uint64_t delete_key_ = kMaxDeleteKey;
  bool have_delete_key_ = false;
  Status error_;  // kFailed
};

}  // namespace lethe
