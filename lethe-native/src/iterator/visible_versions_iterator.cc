#include "iterator/visible_versions_iterator.h"

#include <string>

namespace lethe {

namespace {

// Steps over versions to pass before a seek does it: a seek costs a search
// from the root, a step a move within a node.
constexpr int kStepsBeforeSeek = 8;

class VisibleVersionsIterator final : public InternalIterator {
 public:
  VisibleVersionsIterator(std::unique_ptr<InternalIterator> input, SequenceNumber max_seq)
      : input_(std::move(input)), max_seq_(max_seq) {}

  bool Valid() const override { return status_.ok() && input_->Valid(); }
  void SeekToFirst() override {
    status_ = Status::OK();
    input_->SeekToFirst();
    SkipNewer();
  }
  void SeekToLast() override { status_ = Status::NotSupported("visible versions: backward"); }
  void Seek(std::string_view internal_key) override {
    status_ = Status::OK();
    input_->Seek(internal_key);
    SkipNewer();
  }
  void Next() override {
    const EntryKind kind = TagKind(ExtractTag(input_->key()));
    if (kind == EntryKind::kMerge) {
      input_->Next();  // an operand: the older versions up to a value or tombstone still count
      SkipNewer();
      return;
    }
    done_.assign(ExtractSortKey(input_->key()));  // reuses its buffer: no allocation per key
    input_->Next();
    SkipVersionsOf(done_);
    SkipNewer();
  }
  void Prev() override { status_ = Status::NotSupported("visible versions: backward"); }
  std::string_view key() const override { return input_->key(); }
  std::string_view value() const override { return input_->value(); }
  uint64_t delete_key() const override { return input_->delete_key(); }
  Status status() const override { return status_.ok() ? input_->status() : status_; }

 private:
  bool At(std::string_view sort_key) const {
    return input_->Valid() && ExtractSortKey(input_->key()) == sort_key;
  }
  bool Newer() const { return input_->Valid() && TagSequence(ExtractTag(input_->key())) > max_seq_; }

  // Passes over the remaining (shadowed) versions of sort_key.
  void SkipVersionsOf(const std::string& sort_key) {
    for (int i = 0; i < kStepsBeforeSeek && At(sort_key); i++) input_->Next();
    if (!At(sort_key)) return;
    input_->Seek(MakeInternalKey(sort_key, 0, EntryKind::kTombstone));  // the smallest tag
    if (At(sort_key)) input_->Next();
  }

  // Passes over the versions newer than the bound, of this key and the next.
  void SkipNewer() {
    for (int steps = 0; Newer(); steps++) {
      if (steps < kStepsBeforeSeek) {
        input_->Next();
        continue;
      }
      const std::string sort_key(ExtractSortKey(input_->key()));
      input_->Seek(MakeInternalKey(sort_key, max_seq_, kSeekKind));  // its newest version at most the bound
      steps = -1;
    }
  }

  std::unique_ptr<InternalIterator> input_;
  const SequenceNumber max_seq_;
  Status status_;
  std::string done_;  // the sort key whose newest version was just passed
};

}  // namespace

std::unique_ptr<InternalIterator> NewVisibleVersionsIterator(std::unique_ptr<InternalIterator> input,
                                                             SequenceNumber max_seq) {
  return std::make_unique<VisibleVersionsIterator>(std::move(input), max_seq);
}

}  // namespace lethe
