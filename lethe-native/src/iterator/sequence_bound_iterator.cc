#include "iterator/sequence_bound_iterator.h"

namespace lethe {

namespace {

class SequenceBoundIterator final : public InternalIterator {
 public:
  SequenceBoundIterator(std::unique_ptr<InternalIterator> input, SequenceNumber max_seq)
      : input_(std::move(input)), max_seq_(max_seq) {}

  bool Valid() const override { return input_->Valid(); }
  void SeekToFirst() override {
    input_->SeekToFirst();
    SkipForward();
  }
  void SeekToLast() override {
    input_->SeekToLast();
    SkipBackward();
  }
  void Seek(std::string_view internal_key) override {
    input_->Seek(internal_key);
    SkipForward();
  }
  void Next() override {
    input_->Next();
    SkipForward();
  }
  void Prev() override {
    input_->Prev();
    SkipBackward();
  }
  std::string_view key() const override { return input_->key(); }
  std::string_view value() const override { return input_->value(); }
  uint64_t delete_key() const override { return input_->delete_key(); }
  Status status() const override { return input_->status(); }

 private:
  bool Newer() const { return TagSequence(ExtractTag(input_->key())) > max_seq_; }
  void SkipForward() {
    while (input_->Valid() && Newer()) input_->Next();
  }
  void SkipBackward() {
    while (input_->Valid() && Newer()) input_->Prev();
  }

  std::unique_ptr<InternalIterator> input_;
  const SequenceNumber max_seq_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewSequenceBoundIterator(std::unique_ptr<InternalIterator> input,
                                                           SequenceNumber max_seq) {
  return std::make_unique<SequenceBoundIterator>(std::move(input), max_seq);
}

}  // namespace lethe
