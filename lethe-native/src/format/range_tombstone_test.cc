#include "format/range_tombstone.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "util/random.h"

namespace lethe {
namespace {

std::string Key(uint64_t i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%05llu", static_cast<unsigned long long>(i));
  return buf;
}

// The number a Key() stands for.
uint64_t KeyNumber(std::string_view key) { return std::stoull(std::string(key.substr(1))); }

// The newest visible tombstone covering key, by looking at every one.
SequenceNumber BruteForce(const std::vector<RangeTombstone>& all, const std::string& key, SequenceNumber read_seq) {
  SequenceNumber best = 0;
  for (const RangeTombstone& t : all) {
    if (t.start <= key && key < t.end && t.seq <= read_seq) best = std::max(best, t.seq);
  }
  return best;
}

// A level's worth of files: tombstones in disjoint key stretches of 1000.
TEST(RangeTombstoneTest, SourceAndCursorAnswerAsLookingAtEveryTombstone) {
  Random rnd(3);
  std::vector<RangeTombstone> all;
  TombstoneSource level;
  for (uint64_t file = 0; file < 5; file++) {
    if (file == 2) continue;  // a file without tombstones
    std::vector<RangeTombstone> ts;
    for (int i = 0; i < 60; i++) {
      const uint64_t lo = file * 1000 + rnd.Uniform(990), hi = lo + 1 + rnd.Uniform(40);
      ts.push_back(RangeTombstone{Key(lo), Key(std::min(hi, file * 1000 + 999)), 1 + rnd.Uniform(100)});
    }
    std::erase_if(ts, [](const RangeTombstone& t) { return !(t.start < t.end); });
    all.insert(all.end(), ts.begin(), ts.end());
    level.Add(std::make_shared<const FragmentedTombstones>(ts), Key(file * 1000), Key(file * 1000 + 999));
  }
  TombstoneCursor cursor(&level);
  for (int round = 0; round < 50; round++) {
    const SequenceNumber read_seq = rnd.Uniform(110);
    // covered_before[j]: how many of the keys below j a tombstone covers.
    std::vector<uint64_t> covered_before(5001, 0);
    for (uint64_t j = 0; j < 5000; j++) {
      covered_before[j + 1] = covered_before[j] + (BruteForce(all, Key(j), read_seq) != 0 ? 1 : 0);
    }
    cursor.Reset();
    uint64_t k = rnd.Uniform(5000);
    while (k < 5000) {  // growing keys, as an iterator's between seeks
      const std::string key = Key(k);
      std::string_view end;
      const SequenceNumber want = BruteForce(all, key, read_seq);
      ASSERT_EQ(want, level.MaxCoveringSeq(key, read_seq)) << key << " at " << read_seq;
      ASSERT_EQ(want, cursor.MaxCoveringSeq(key, read_seq, &end)) << key << " at " << read_seq;
      if (want != 0) {
        // The fragment is covered alike up to its end: a seek there skips nothing live.
        ASSERT_LT(key, std::string(end));
        const std::string last = Key(KeyNumber(end) - 1);
        ASSERT_EQ(want, BruteForce(all, last, read_seq)) << key << " .. " << end;
      } else {
        // What the cursor vouches for after an uncovered key: none after it is covered up to its bound.
        std::string_view bound;
        bool to_end = false;
        if (cursor.ClearBefore(&bound, &to_end)) {
          uint64_t until = 5000;  // the first key not vouched for
          if (!to_end) until = std::max(k + 1, std::min<uint64_t>(5000, KeyNumber(bound)));
          ASSERT_EQ(covered_before[k + 1], covered_before[until]) << "clear after " << key << " up to " << until;
        }
      }
      k += 1 + rnd.Uniform(rnd.OneIn(10) ? 300 : 4);
    }
  }
}

// Keys of a few bytes after a long shared prefix, of every length, with zero
// bytes (the search's padding), ties in the first 8 bytes after the prefix.
std::string ByteKey(Random* rnd, const std::string& prefix) {
  std::string k = prefix;
  const size_t n = rnd->Uniform(12);
  for (size_t i = 0; i < n; i++) k.push_back(static_cast<char>(rnd->OneIn(3) ? 0 : rnd->Uniform(4)));
  return k;
}

TEST(RangeTombstoneTest, FindFragmentAnswersAsAPlainSearchOfTheEnds) {
  Random rnd(5);
  for (int round = 0; round < 200; round++) {
    const std::string prefix = rnd.OneIn(2) ? std::string("group-0042/", 11) : std::string();
    std::vector<RangeTombstone> ts;
    for (int i = 0, n = 1 + static_cast<int>(rnd.Uniform(40)); i < n; i++) {
      std::string a = ByteKey(&rnd, prefix), b = ByteKey(&rnd, prefix);
      if (b < a) std::swap(a, b);
      ts.push_back(RangeTombstone{a, b, 1 + rnd.Uniform(9)});
    }
    const FragmentedTombstones set(ts);
    const auto& frags = set.fragments();
    for (int q = 0; q < 200; q++) {
      // Keys with the prefix, before it, after it, and cut short inside it.
      std::string key = ByteKey(&rnd, prefix);
      if (rnd.OneIn(8)) key = prefix.substr(0, rnd.Uniform(static_cast<uint32_t>(prefix.size()) + 1));
      if (rnd.OneIn(8)) key = std::string("zz") + key;
      const size_t want = static_cast<size_t>(
          std::upper_bound(frags.begin(), frags.end(), key,
                           [](const std::string& k, const FragmentedTombstones::Fragment& f) { return k < f.end; }) -
          frags.begin());
      ASSERT_EQ(want, set.FindFragment(key)) << "round " << round << " query " << q;
    }
  }
}

}  // namespace
}  // namespace lethe
