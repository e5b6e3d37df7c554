// MergingIterator: forward, backward and direction changes over children
// whose entries interleave, against the sorted union.
#include "iterator/merging_iterator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "util/random.h"
#include "vector_iterator.h"

namespace lethe {
namespace {

TEST(MergingIteratorTest, RandomWalksMatchTheSortedUnion) {
  for (uint32_t seed = 1; seed <= 40; seed++) {
    Random rnd(seed);
    const int children = 1 + static_cast<int>(rnd.Uniform(5));
    std::vector<std::vector<VectorIterator::E>> parts(children);
    std::vector<std::string> all;
    SequenceNumber seq = 1;
    for (int k = 0; k < 60; k++) {
      const std::string key = "k" + std::to_string(rnd.Uniform(30));
      VectorIterator::E e{MakeInternalKey(key, seq++, EntryKind::kValue), "v", 0};
      all.push_back(e.ikey);
      parts[rnd.Uniform(children)].push_back(std::move(e));
    }
    std::sort(all.begin(), all.end(), [](const std::string& a, const std::string& b) {
      return CompareInternalKey(a, b) < 0;
    });
    std::vector<std::unique_ptr<InternalIterator>> inputs;
    for (auto& p : parts) inputs.push_back(std::make_unique<VectorIterator>(std::move(p)));
    auto it = NewMergingIterator(std::move(inputs));

    long pos = static_cast<long>(all.size()) - 1;
    it->SeekToLast();
    for (int step = 0; step < 400; step++) {
      const bool valid = pos >= 0 && pos < static_cast<long>(all.size());
      ASSERT_EQ(it->Valid(), valid) << "seed " << seed << " step " << step;
      if (!valid) {
        const bool first = rnd.OneIn(2);
        first ? it->SeekToFirst() : it->SeekToLast();
        pos = first ? 0 : static_cast<long>(all.size()) - 1;
        continue;
      }
      ASSERT_EQ(it->key(), all[pos]) << "seed " << seed << " step " << step;
      if (rnd.OneIn(10)) {
        pos = static_cast<long>(rnd.Uniform(static_cast<uint32_t>(all.size())));
        rnd.OneIn(2) ? it->Seek(all[pos]) : it->SeekForPrev(all[pos]);
      } else if (rnd.OneIn(2)) {
        it->Next();
        pos++;
      } else {
        it->Prev();
        pos--;
      }
    }
  }
}

}  // namespace
}  // namespace lethe
