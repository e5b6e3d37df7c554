#include "iterator/merging_iterator.h"

#include <algorithm>

#include "format/internal_key.h"

namespace lethe {
namespace {

// A binary min-heap over the valid children, keyed by internal key.
class MergingIterator final : public InternalIterator {
 public:
  explicit MergingIterator(std::vector<std::unique_ptr<InternalIterator>> children)
      : children_(std::move(children)) {
    heap_.reserve(children_.size());
  }

  bool Valid() const override { return !heap_.empty() && status_.ok(); }
  void SeekToFirst() override {
    for (auto& c : children_) c->SeekToFirst();
    Rebuild();
  }
  void Seek(std::string_view target) override {
    for (auto& c : children_) c->Seek(target);
    Rebuild();
  }
  void Next() override {
    InternalIterator* top = heap_.front();
    top->Next();
    if (top->Valid()) {
      SiftDown(0);
    } else {
      if (!top->status().ok()) status_ = top->status();
      heap_.front() = heap_.back();
      heap_.pop_back();
      if (!heap_.empty()) SiftDown(0);
    }
  }
  std::string_view key() const override { return heap_.front()->key(); }
  std::string_view value() const override { return heap_.front()->value(); }
  uint64_t delete_key() const override { return heap_.front()->delete_key(); }
  Status status() const override {
    if (!status_.ok()) return status_;
    for (const auto& c : children_) {
      Status s = c->status();
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

 private:
  static bool Greater(InternalIterator* a, InternalIterator* b) {
    return CompareInternalKey(a->key(), b->key()) > 0;
  }
  void Rebuild() {
    heap_.clear();
    status_ = Status::OK();
    for (auto& c : children_) {
      if (c->Valid()) {
        heap_.push_back(c.get());
      } else if (!c->status().ok()) {
        status_ = c->status();
      }
    }
    std::make_heap(heap_.begin(), heap_.end(), Greater);
  }
  void SiftDown(size_t i) {
    size_t n = heap_.size();
    while (true) {
      size_t l = 2 * i + 1, r = l + 1, m = i;
      if (l < n && Greater(heap_[m], heap_[l])) m = l;
      if (r < n && Greater(heap_[m], heap_[r])) m = r;
      if (m == i) return;
      std::swap(heap_[i], heap_[m]);
      i = m;
    }
  }

  std::vector<std::unique_ptr<InternalIterator>> children_;
  std::vector<InternalIterator*> heap_;
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewMergingIterator(
    std::vector<std::unique_ptr<InternalIterator>> children) {
  if (children.empty()) return std::make_unique<EmptyIterator>();
  if (children.size() == 1) return std::move(children[0]);
  return std::make_unique<MergingIterator>(std::move(children));
}

}  // namespace lethe
