#include "iterator/merging_iterator.h"

#include <algorithm>
#include <string>

#include "format/internal_key.h"

namespace lethe {
namespace {

// A binary heap over the valid children: a min-heap by internal key while
// moving forwards, a max-heap while moving backwards. Changing direction
// repositions every other child around the current key.
class MergingIterator final : public InternalIterator {
 public:
  explicit MergingIterator(std::vector<std::unique_ptr<InternalIterator>> children)
      : children_(std::move(children)) {
    heap_.reserve(children_.size());
  }

  bool Valid() const override { return !heap_.empty() && status_.ok(); }
  void SeekToFirst() override {
    for (auto& c : children_) c->SeekToFirst();
    Rebuild(true);
  }
  void SeekToLast() override {
    for (auto& c : children_) c->SeekToLast();
    Rebuild(false);
  }
  void Seek(std::string_view target) override {
    for (auto& c : children_) c->Seek(target);
    Rebuild(true);
  }
  void Next() override {
    if (!forward_) return TurnAround(true);
    Step([](InternalIterator* c) { c->Next(); });
  }
  void Prev() override {
    if (forward_) return TurnAround(false);
    Step([](InternalIterator* c) { c->Prev(); });
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
  // Whether a belongs below b in the heap.
  bool Below(InternalIterator* a, InternalIterator* b) const {
    const int c = CompareInternalKey(a->key(), b->key());
    return forward_ ? c > 0 : c < 0;
  }
  template <typename Move>
  void Step(Move move) {
    InternalIterator* top = heap_.front();
    move(top);
    if (top->Valid()) {
      SiftDown(0);
      return;
    }
    if (!top->status().ok()) status_ = top->status();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(0);
  }
  // Moves the current child one step in the new direction and places every
  // other child on its entry next to the current key in that direction (keys
  // are unique across children), then orders the heap anew.
  void TurnAround(bool forward) {
    InternalIterator* current = heap_.front();
    const std::string key(current->key());
    for (auto& c : children_) {
      if (c.get() == current) {
        forward ? c->Next() : c->Prev();
        continue;
      }
      c->Seek(key);
      if (forward) {
        if (c->Valid() && CompareInternalKey(c->key(), key) == 0) c->Next();
      } else if (c->Valid()) {
        c->Prev();
      } else if (c->status().ok()) {
        c->SeekToLast();
      }
    }
    Rebuild(forward);
  }
  void Rebuild(bool forward) {
    forward_ = forward;
    heap_.clear();
    status_ = Status::OK();
    for (auto& c : children_) {
      if (c->Valid()) {
        heap_.push_back(c.get());
      } else if (!c->status().ok()) {
        status_ = c->status();
      }
    }
    std::make_heap(heap_.begin(), heap_.end(),
                   [this](InternalIterator* a, InternalIterator* b) { return Below(a, b); });
  }
  void SiftDown(size_t i) {
    size_t n = heap_.size();
    while (true) {
      size_t l = 2 * i + 1, r = l + 1, m = i;
      if (l < n && Below(heap_[m], heap_[l])) m = l;
      if (r < n && Below(heap_[m], heap_[r])) m = r;
      if (m == i) return;
      std::swap(heap_[i], heap_[m]);
      i = m;
    }
  }

  std::vector<std::unique_ptr<InternalIterator>> children_;
  std::vector<InternalIterator*> heap_;
  bool forward_ = true;
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
