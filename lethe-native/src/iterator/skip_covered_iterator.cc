#include "iterator/skip_covered_iterator.h"

#include <string>

namespace lethe {
namespace {

class SkipCoveredIterator final : public InternalIterator {
 public:
  SkipCoveredIterator(std::unique_ptr<InternalIterator> source, std::vector<const TombstoneSource*> newer,
                      const TombstoneSource* own, SequenceNumber read_seq, std::atomic<uint64_t>* skips)
      : source_(std::move(source)), sources_(std::move(newer)), own_(own), own_cursor_(own), read_seq_(read_seq),
        skips_(skips) {
    for (const TombstoneSource* t : sources_) newer_.emplace_back(t);
  }

  bool Valid() const override { return source_->Valid(); }
  void SeekToFirst() override {
    source_->SeekToFirst();
    ResetCursors();
    SkipCovered();
  }
  void SeekToLast() override {
    source_->SeekToLast();
    SkipCoveredBackward();
  }
  void Seek(std::string_view internal_key) override {
    source_->Seek(internal_key);
    ResetCursors();
    SkipCovered();
  }
  void Next() override {
    source_->Next();
    if (InClearStretch()) return;
    SkipCovered();
  }
  void Prev() override {
    source_->Prev();
    SkipCoveredBackward();
  }
  std::string_view key() const override { return source_->key(); }
  std::string_view value() const override { return source_->value(); }
  uint64_t delete_key() const override { return source_->delete_key(); }
  Status status() const override { return source_->status(); }

 private:
  void ResetCursors() {
    for (TombstoneCursor& c : newer_) c.Reset();
    own_cursor_.Reset();
    clear_ = false;
  }

  // Whether the entry lies where SkipCovered found, at the entry it last
  // kept, that no tombstone can cover: one comparison per entry there,
  // instead of one per source.
  bool InClearStretch() const {
    if (!clear_) return false;
    if (!source_->Valid()) return true;  // nothing left to pass over
    return clear_to_end_ || ExtractSortKey(source_->key()) < clear_until_;
  }

  // Called on an entry SkipCovered keeps, once every cursor has looked at it:
  // the stretch after it that no cursor's tombstones reach (their nearest bound).
  void NoteClearStretch() {
    clear_ = true;
    clear_to_end_ = true;
    auto bound_by = [this](const TombstoneCursor& c) {
      std::string_view bound;
      bool to_end = false;
      if (!c.ClearBefore(&bound, &to_end)) return false;
      if (!to_end && (clear_to_end_ || bound < clear_until_)) {
        clear_until_ = bound;
        clear_to_end_ = false;
      }
      return true;
    };
    for (const TombstoneCursor& c : newer_) clear_ = clear_ && bound_by(c);
    if (own_ != nullptr) clear_ = clear_ && bound_by(own_cursor_);
  }

  // Until the entry is one no tombstone deletes: while a newer source's
  // tombstone covers it, seeks to the end of the longest covering fragment
  // (everything before it is covered too); while one of its own source's
  // newer than it covers it, moves on by one.
  void SkipCovered() {
    clear_ = false;
    while (source_->Valid()) {
      const std::string_view key = ExtractSortKey(source_->key());
      std::string_view end, longest;
      for (TombstoneCursor& c : newer_) {
        if (c.MaxCoveringSeq(key, read_seq_, &end) != 0 && end > longest) longest = end;
      }
      if (!longest.empty()) {
        source_->Seek(SkipTarget(longest));
      } else if (own_ != nullptr && own_cursor_.MaxCoveringSeq(key, read_seq_) > EntrySequence()) {
        source_->Next();
      } else {
        NoteClearStretch();
        return;
      }
    }
  }

  // The first internal key of sort key k, where a skip seeks to (or before); counts the skip.
  std::string_view SkipTarget(std::string_view k) {
    target_.clear();
    AppendInternalKey(&target_, k, kMaxSequenceNumber, kSeekKind);
    if (skips_ != nullptr) skips_->fetch_add(1, std::memory_order_relaxed);
    return target_;
  }

  // As SkipCovered, backwards: seeks to the last entry before the start of
  // the covering fragment that starts first. The forward cursors are
  // positioned anew at the next forward move.
  void SkipCoveredBackward() {
    ResetCursors();
    while (source_->Valid()) {
      const std::string_view key = ExtractSortKey(source_->key());
      std::string_view end, start, first;
      bool covered = false;
      for (const TombstoneSource* t : sources_) {
        if (t->MaxCoveringSeq(key, read_seq_, &end, &start) != 0 && (!covered || start < first)) {
          first = start;
          covered = true;
        }
      }
      if (covered) {
        source_->SeekForPrev(SkipTarget(first));
      } else if (own_ != nullptr && own_->MaxCoveringSeq(key, read_seq_) > EntrySequence()) {
        source_->Prev();
      } else {
        return;
      }
    }
  }

  SequenceNumber EntrySequence() const { return TagSequence(ExtractTag(source_->key())); }

  std::unique_ptr<InternalIterator> source_;
  std::vector<const TombstoneSource*> sources_;
  std::vector<TombstoneCursor> newer_;  // keys only grow between seeks
  const TombstoneSource* const own_;    // null: none
  TombstoneCursor own_cursor_;
  const SequenceNumber read_seq_;
  std::atomic<uint64_t>* const skips_;
  std::string target_;
  // The stretch after the entry last kept that no tombstone reaches: up to
  // clear_until_ (which points into a source), or to the end.
  bool clear_ = false;
  bool clear_to_end_ = false;
  std::string_view clear_until_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewSkipCoveredIterator(std::unique_ptr<InternalIterator> source,
                                                         std::vector<const TombstoneSource*> newer,
                                                         const TombstoneSource* own, SequenceNumber read_seq,
                                                         std::atomic<uint64_t>* skips) {
  std::erase_if(newer, [](const TombstoneSource* t) { return t->empty(); });
  if (own != nullptr && own->empty()) own = nullptr;
  if (newer.empty() && own == nullptr) return source;
  return std::make_unique<SkipCoveredIterator>(std::move(source), std::move(newer), own, read_seq, skips);
}

}  // namespace lethe
