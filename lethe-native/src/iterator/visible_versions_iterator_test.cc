// VisibleVersionsIterator: what a reader at a sequence needs, against a
// direct reading of the versions; and keys with many versions passed with
// seeks, not steps.
#include "iterator/visible_versions_iterator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/random.h"
#include "vector_iterator.h"

namespace lethe {
namespace {

// Counts the moves made on a source.
class CountingIterator final : public InternalIterator {
 public:
  CountingIterator(std::unique_ptr<InternalIterator> input, int* steps, int* seeks)
      : input_(std::move(input)), steps_(steps), seeks_(seeks) {}
  bool Valid() const override { return input_->Valid(); }
  void SeekToFirst() override { input_->SeekToFirst(); }
  void SeekToLast() override { input_->SeekToLast(); }
  void Seek(std::string_view k) override {
    ++*seeks_;
    input_->Seek(k);
  }
  void Next() override {
    ++*steps_;
    input_->Next();
  }
  void Prev() override { input_->Prev(); }
  std::string_view key() const override { return input_->key(); }
  std::string_view value() const override { return input_->value(); }
  uint64_t delete_key() const override { return input_->delete_key(); }
  Status status() const override { return input_->status(); }

 private:
  std::unique_ptr<InternalIterator> input_;
  int* steps_;
  int* seeks_;
};

// Per sort key: the versions at most `bound`, newest first, up to and
// including the first value or tombstone.
std::vector<std::string> Visible(std::vector<VectorIterator::E> entries, SequenceNumber bound) {
  VectorIterator sorted(std::move(entries));
  std::vector<std::string> out;
  std::string key;
  bool done = false;
  for (sorted.SeekToFirst(); sorted.Valid(); sorted.Next()) {
    const uint64_t tag = ExtractTag(sorted.key());
    if (ExtractSortKey(sorted.key()) != key) {
      key = std::string(ExtractSortKey(sorted.key()));
      done = false;
    }
    if (done || TagSequence(tag) > bound) continue;
    out.emplace_back(sorted.key());
    done = TagKind(tag) != EntryKind::kMerge;
  }
  return out;
}

std::vector<std::string> Walk(InternalIterator* it) {
  std::vector<std::string> out;
  for (; it->Valid(); it->Next()) out.emplace_back(it->key());
  EXPECT_TRUE(it->status().ok());
  return out;
}

TEST(VisibleVersionsIteratorTest, YieldsWhatAReaderAtTheBoundNeeds) {
  for (uint32_t seed = 1; seed <= 200; seed++) {
    Random rnd(seed);
    std::vector<VectorIterator::E> entries;
    const int keys = 1 + static_cast<int>(rnd.Uniform(12));
    SequenceNumber seq = 1;
    for (int i = 0; i < 300; i++) {
      const std::string key = "k" + std::to_string(rnd.Uniform(keys));
      const uint32_t r = rnd.Uniform(10);
      const EntryKind kind = r < 5 ? EntryKind::kValue : (r < 8 ? EntryKind::kMerge : EntryKind::kTombstone);
      entries.push_back({MakeInternalKey(key, seq++, kind), "v" + std::to_string(i), static_cast<uint64_t>(i)});
    }
    const SequenceNumber bound = rnd.Uniform(static_cast<uint32_t>(seq) + 1);
    auto it = NewVisibleVersionsIterator(std::make_unique<VectorIterator>(entries), bound);
    it->SeekToFirst();
    ASSERT_EQ(Walk(it.get()), Visible(entries, bound)) << "seed " << seed << " bound " << bound;

    // A seek to a key lands on its visible versions, then goes on to the next keys'.
    const std::string from = "k" + std::to_string(rnd.Uniform(keys));
    std::vector<std::string> expected;
    for (const std::string& k : Visible(entries, bound)) {
      if (ExtractSortKey(k) >= from) expected.push_back(k);
    }
    it->Seek(MakeInternalKey(from, kMaxSequenceNumber, kSeekKind));
    ASSERT_EQ(Walk(it.get()), expected) << "seed " << seed << " from " << from;
  }
}

TEST(VisibleVersionsIteratorTest, PassesManyVersionsWithSeeks) {
  // "hot" holds 10,000 versions above the bound and 10,000 below it; its
  // neighbours one each.
  std::vector<VectorIterator::E> entries;
  entries.push_back({MakeInternalKey("a", 1, EntryKind::kValue), "a", 0});
  for (SequenceNumber s = 2; s < 20'002; s++) entries.push_back({MakeInternalKey("hot", s, EntryKind::kValue), "h", 0});
  entries.push_back({MakeInternalKey("z", 3, EntryKind::kValue), "z", 0});
  int steps = 0, seeks = 0;
  auto it = NewVisibleVersionsIterator(
      std::make_unique<CountingIterator>(std::make_unique<VectorIterator>(entries), &steps, &seeks), 10'001);
  it->SeekToFirst();
  const std::vector<std::string> expected = {MakeInternalKey("a", 1, EntryKind::kValue),
                                             MakeInternalKey("hot", 10'001, EntryKind::kValue),
                                             MakeInternalKey("z", 3, EntryKind::kValue)};
  EXPECT_EQ(Walk(it.get()), expected);
  EXPECT_LE(steps, 30) << "versions are passed with seeks once a few steps did not get past them";
  EXPECT_EQ(seeks, 2);
}

TEST(VisibleVersionsIteratorTest, RefusesToGoBackward) {
  std::vector<VectorIterator::E> entries = {{MakeInternalKey("a", 1, EntryKind::kValue), "a", 0}};
  auto it = NewVisibleVersionsIterator(std::make_unique<VectorIterator>(entries), 5);
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsNotSupported());
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  it->Prev();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsNotSupported());
}

}  // namespace
}  // namespace lethe
