// VectorIterator: an in-memory sorted source of internal entries, for tests of
// what is built on InternalIterator.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "format/internal_key.h"
#include "iterator/internal_iterator.h"

namespace lethe {

class VectorIterator final : public InternalIterator {
 public:
  struct E {
    std::string ikey, value;
    uint64_t dk;
  };
  explicit VectorIterator(std::vector<E> e) : e_(std::move(e)) {
    std::sort(e_.begin(), e_.end(), [](const E& a, const E& b) { return CompareInternalKey(a.ikey, b.ikey) < 0; });
  }
  bool Valid() const override { return i_ < e_.size(); }
  void SeekToFirst() override { i_ = 0; }
  void SeekToLast() override { i_ = e_.empty() ? 0 : e_.size() - 1; }
  void Seek(std::string_view t) override {
    for (i_ = 0; i_ < e_.size() && CompareInternalKey(e_[i_].ikey, t) < 0; i_++) {
    }
  }
  void Next() override { i_++; }
  void Prev() override { i_ = i_ == 0 ? e_.size() : i_ - 1; }
  std::string_view key() const override { return e_[i_].ikey; }
  std::string_view value() const override { return e_[i_].value; }
  uint64_t delete_key() const override { return e_[i_].dk; }
  Status status() const override { return Status::OK(); }

 private:
  std::vector<E> e_;
  size_t i_ = 0;
};

}  // namespace lethe
