#include "iterator/db_iter.h"

#include <algorithm>
#include <vector>

namespace lethe {
namespace {

class DBIter final : public Iterator {
 public:
  DBIter(std::unique_ptr<InternalIterator> input, SequenceNumber read_seq, const ReadOptions& options, std::shared_ptr<const void> pin,
         const SecondaryDeletes* secondary)
      : pin_(std::move(pin)), secondary_(secondary != nullptr && !secondary->empty() ? secondary : nullptr),
        input_(std::move(input)), read_seq_(read_seq), has_lower_(options.has_lower_bound), has_upper_(options.has_upper_bound),
        lower_(options.lower_bound), upper_(options.upper_bound) {}

  bool Valid() const override { return valid_; }
  void SeekToFirst() override {
    if (has_lower_) return Seek(lower_);
    forward_ = true;
    input_->SeekToFirst();
    FindNextUserEntry(false);
  }
  void SeekToLast() override {
    forward_ = false;
    if (has_upper_) {
      SeekInputBefore(upper_);
    } else {
      input_->SeekToLast();
    }
    FindPrevUserEntry();
  }
  void Seek(std::string_view target) override {
    if (has_lower_ && target < lower_) target = lower_;
    forward_ = true;
    scratch_.clear();
    AppendInternalKey(&scratch_, target, read_seq_, kSeekKind);
    input_->Seek(scratch_);
    FindNextUserEntry(false);
  }
  void SeekForPrev(std::string_view target) override {
    if (has_upper_ && target >= upper_) return SeekToLast();
    forward_ = false;
    // The last internal key of target: sequence 0 of the smallest kind.
    scratch_.clear();
    AppendInternalKey(&scratch_, target, 0, EntryKind::kTombstone);
    input_->SeekForPrev(scratch_);
    FindPrevUserEntry();
  }
  void Next() override {
    if (!valid_) return;
    if (!forward_) {
      // The input is before key_'s versions: place it on them again.
      forward_ = true;
      scratch_.clear();
      AppendInternalKey(&scratch_, key_, kMaxSequenceNumber, kSeekKind);
      input_->Seek(scratch_);
    }
    FindNextUserEntry(true);
  }
  void Prev() override {
    if (!valid_) return;
    if (forward_) {
      // The input is at or after key_'s versions: place it before them.
      forward_ = false;
      SeekInputBefore(key_);
    }
    FindPrevUserEntry();
  }
  std::string_view key() const override { return key_; }
  std::string_view value() const override { return value_; }
  uint64_t delete_key() const override { return delete_key_; }
  Status status() const override { return status_.ok() ? input_->status() : status_; }

 private:
  // Under a secondary delete: acts as a point tombstone.
  bool Hidden(SequenceNumber seq, EntryKind kind, uint64_t dk) const {
    return secondary_ != nullptr && secondary_->Hides(seq, kind, dk, read_seq_);
  }

  // Moves to the newest visible live entry at or after the input position;
  // with skipping, first passes the remaining versions of key_.
  void FindNextUserEntry(bool skipping) {
    valid_ = false;
    while (input_->Valid()) {
      std::string_view ikey = input_->key();
      uint64_t tag = ExtractTag(ikey);
      std::string_view sk = ExtractSortKey(ikey);
      if (TagSequence(tag) > read_seq_ || (skipping && sk == key_)) {
        input_->Next();
        continue;
      }
      skipping = false;
      if (has_upper_ && sk >= upper_) return;
      key_.assign(sk);
      EntryKind kind = TagKind(tag);
      if (kind == EntryKind::kTombstone ||
          Hidden(TagSequence(tag), kind, input_->delete_key())) {
        skipping = true;
        input_->Next();
        continue;
      }
      if (kind == EntryKind::kValue) {
        value_ = input_->value();
        delete_key_ = input_->delete_key();
        valid_ = true;
        return;
      }
      if (kind != EntryKind::kMerge) {
        status_ = Status::Corruption("unknown entry kind during iteration");
        return;
      }
      ResolveMerge();
      valid_ = true;
      return;
    }
  }

  // Places the input on the last entry whose sort key is < key.
  void SeekInputBefore(std::string_view key) {
    scratch_.clear();
    AppendInternalKey(&scratch_, key, kMaxSequenceNumber, kSeekKind);
    input_->SeekForPrev(scratch_);
  }

  // Moving backwards, the input meets a sort key's versions oldest first:
  // folds them into its visible value, and goes on to the next smaller sort
  // key while a sort key has none. Stops at the lower bound.
  void FindPrevUserEntry() {
    valid_ = false;
    while (input_->Valid()) {
      const std::string_view sk = ExtractSortKey(input_->key());
      if (has_lower_ && sk < lower_) return;
      key_.assign(sk);
      if (FoldBackward()) {
        valid_ = true;
        return;
      }
      if (!status_.ok()) return;
    }
  }

  // Walks the input back over key_'s versions, applying each visible one in
  // the order written: a value replaces, a tombstone (point or
  // secondary) clears, a merge operand appends. True if a value results.
  bool FoldBackward() {
    bool has_value = false;
    operands_.clear();
    while (input_->Valid()) {
      const std::string_view ikey = input_->key();
      if (ExtractSortKey(ikey) != key_) break;
      const uint64_t tag = ExtractTag(ikey);
      const SequenceNumber seq = TagSequence(tag);
      const EntryKind kind = TagKind(tag);
      if (seq <= read_seq_) {
        if (kind == EntryKind::kTombstone || Hidden(seq, kind, input_->delete_key())) {
          has_value = false;
          operands_.clear();
        } else if (kind == EntryKind::kValue) {
          merged_.assign(input_->value());
          has_value = true;
          operands_.clear();
        } else if (kind == EntryKind::kMerge) {
          operands_.emplace_back(input_->value());
        } else {
          status_ = Status::Corruption("unknown entry kind during iteration");
          return false;
        }
        delete_key_ = input_->delete_key();
      }
      input_->Prev();
    }
    if (!has_value && operands_.empty()) return false;
    if (!has_value) merged_.clear();
    for (const std::string& op : operands_) {
      AppendMergeOperand(&merged_, !has_value, op);
      has_value = true;
    }
    value_ = merged_;
    return true;
  }

  // The input is at the newest operand of key_: fold it with the operands
  // and base value below it. Leaves the input past what it consumed.
  void ResolveMerge() {
    delete_key_ = input_->delete_key();
    operands_.clear();
    operands_.emplace_back(input_->value());
    std::string base;
    bool has_base = false;
    input_->Next();
    while (input_->Valid()) {
      std::string_view ikey = input_->key();
      if (ExtractSortKey(ikey) != key_) break;
      uint64_t tag = ExtractTag(ikey);
      EntryKind kind = TagKind(tag);
      if (kind == EntryKind::kTombstone || Hidden(TagSequence(tag), kind, input_->delete_key())) {
        break;
      }
      if (kind == EntryKind::kValue) {
        base.assign(input_->value());
        has_base = true;
        break;
      }
      operands_.emplace_back(input_->value());
      input_->Next();
    }
    merged_.clear();
    bool empty = true;
    if (has_base) {
      merged_ = std::move(base);
      empty = false;
    }
    for (auto it = operands_.rbegin(); it != operands_.rend(); ++it) {
      AppendMergeOperand(&merged_, empty, *it);
      empty = false;
    }
    value_ = merged_;
  }

  std::shared_ptr<const void> pin_;
  const SecondaryDeletes* secondary_;
  std::unique_ptr<InternalIterator> input_;
  SequenceNumber read_seq_;
  bool has_lower_, has_upper_;
  std::string lower_, upper_;
  bool forward_ = true;

  bool valid_ = false;
  std::string key_;
  std::string_view value_;
  uint64_t delete_key_ = 0;
  std::string merged_;
  std::vector<std::string> operands_;
  std::string scratch_;
  Status status_;
};

}  // namespace

std::unique_ptr<Iterator> NewDBIterator(std::unique_ptr<InternalIterator> input,
                                        SequenceNumber read_seq, const ReadOptions& options,
                                        std::shared_ptr<const void> pin,
                                        const SecondaryDeletes* secondary) {
  return std::make_unique<DBIter>(std::move(input), read_seq, options,
                                  std::move(pin), secondary);
}

}  // namespace lethe
