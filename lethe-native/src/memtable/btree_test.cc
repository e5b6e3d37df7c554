#include "memtable/btree.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <deque>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "util/random.h"

namespace lethe {
namespace {

// Test keys: one length byte, then the key's bytes (which may be zero).
struct LengthPrefixedKeys {
  std::string_view UserKey(const char* e) const {
    return std::string_view(e + 1, static_cast<unsigned char>(e[0]));
  }
  int Compare(const char* a, const char* b) const {
    int c = UserKey(a).compare(UserKey(b));
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
};
using Tree = BTree<LengthPrefixedKeys>;

class Keys {
 public:
  const char* Make(const std::string& k) {
    store_.push_back(std::string(1, static_cast<char>(k.size())) + k);
    return store_.back().data();
  }

 private:
  std::deque<std::string> store_;  // stable addresses
};

std::string Of(const char* e) { return std::string(LengthPrefixedKeys().UserKey(e)); }

// Keys of three shapes: a 2-byte group and 8 equal "timestamp" bytes before 4 random ones (long
// shared heads, as timers), short keys of 0-4 bytes that may hold zero bytes, and a stem with
// zero bytes appended (keys that are prefixes of others).
std::string RandomKey(Random& rnd) {
  std::string k;
  switch (rnd.Uniform(3)) {
    case 0:
      k.push_back(static_cast<char>(rnd.Uniform(3)));
      k.push_back(static_cast<char>(rnd.Uniform(256)));
      k.append(8, static_cast<char>(0x17));
      for (int i = 0; i < 4; i++) k.push_back(static_cast<char>(rnd.Uniform(256)));
      break;
    case 1:
      for (uint64_t i = rnd.Uniform(5); i > 0; i--) k.push_back(static_cast<char>(rnd.Uniform(4)));
      break;
    default:
      k = "stem";
      k.append(rnd.Uniform(12), '\0');
      break;
  }
  return k;
}

void ExpectSameForward(const Tree& tree, const std::set<std::string>& model) {
  Tree::Iterator it(&tree);
  auto m = model.begin();
  for (it.SeekToFirst(); it.Valid(); it.Next(), ++m) {
    ASSERT_NE(m, model.end());
    ASSERT_EQ(Of(it.key()), *m);
  }
  EXPECT_EQ(m, model.end());
}

void ExpectSameBackward(const Tree& tree, const std::set<std::string>& model) {
  Tree::Iterator it(&tree);
  auto m = model.rbegin();
  for (it.SeekToLast(); it.Valid(); it.Prev(), ++m) {
    ASSERT_NE(m, model.rend());
    ASSERT_EQ(Of(it.key()), *m);
  }
  EXPECT_EQ(m, model.rend());
}

// A tree over test keys, with the set of keys added.
class BTreeTest : public ::testing::Test {
 protected:
  void Add(const std::string& k) {
    if (model.insert(k).second) tree.Insert(keys.Make(k));
  }
  // The tree's nodes (all the arena holds) per key.
  size_t NodeBytesPerKey() const { return arena.MemoryUsage() / model.size(); }

  Arena arena;
  Tree tree{LengthPrefixedKeys(), &arena};
  Keys keys;
  std::set<std::string> model;
};

TEST_F(BTreeTest, EmptyTree) {
  Tree::Iterator it(&tree);
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  it.SeekToLast();
  EXPECT_FALSE(it.Valid());
  it.Seek(keys.Make("a"));
  EXPECT_FALSE(it.Valid());
}

// Random keys with long shared heads, zero bytes and keys that prefix others: iteration both
// ways, seeks of present and absent keys, and steps from each seek all agree with a sorted set.
TEST_F(BTreeTest, RandomKeysOrderSeeksAndSteps) {
  Random rnd(11);
  for (int i = 0; i < 60000; i++) {
    std::string k = RandomKey(rnd);
    Add(k);
  }
  ASSERT_GT(model.size(), 20000u);
  ExpectSameForward(tree, model);
  ExpectSameBackward(tree, model);
  Tree::Iterator it(&tree);
  for (int i = 0; i < 5000; i++) {
    std::string target = RandomKey(rnd);
    it.Seek(keys.Make(target));
    auto m = model.lower_bound(target);
    if (m == model.end()) {
      ASSERT_FALSE(it.Valid()) << i;
      continue;
    }
    ASSERT_TRUE(it.Valid()) << i;
    ASSERT_EQ(Of(it.key()), *m);
    auto back = m;
    for (int s = 0; s < 3 && back != model.begin(); s++) {
      it.Prev();
      --back;
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(Of(it.key()), *back);
    }
    for (int s = 0; s < 6; s++) {
      it.Next();
      if (++back == model.end()) break;
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(Of(it.key()), *back);
    }
  }
}

// Keys arriving in order (ascending, then descending below them) leave nodes nearly full, not
// half empty: the tree's nodes take under 24 bytes per key (a half-full leaf: 35).
TEST_F(BTreeTest, OrderedArrivalsFillNodes) {
  char buf[16];
  for (int i = 0; i < 100000; i++) {
    std::snprintf(buf, sizeof(buf), "k%09d", 200000 + i);
    Add(buf);
  }
  for (int i = 0; i < 100000; i++) {
    std::snprintf(buf, sizeof(buf), "k%09d", 199999 - i);
    Add(buf);
  }
  ExpectSameForward(tree, model);
  ExpectSameBackward(tree, model);
  EXPECT_LT(NodeBytesPerKey(), 24u);
}

// Sixteen groups, each a 2-byte group number then rising 8-byte times (timers of one key group
// each), arriving interleaved: every insert goes right behind its group's previous one, inside
// the tree, where a group's newest keys soon end their leaf, and nodes still fill (half-full
// leaves would take 35 bytes per key).
TEST_F(BTreeTest, RisingKeysWithinGroupsFillNodes) {
  for (uint64_t t = 0; t < 10000; t++) {
    for (int g = 0; g < 16; g++) {
      std::string k{static_cast<char>(0), static_cast<char>(g)};
      for (int b = 7; b >= 0; b--) k.push_back(static_cast<char>((1000000 + t * 37) >> (8 * b)));
      Add(k);
    }
  }
  ExpectSameForward(tree, model);
  EXPECT_LT(NodeBytesPerKey(), 24u);
}

// A writer inserts while two readers seek keys already published and step around them: a seek
// lands on its key, steps ascend and descend strictly and come back no lower than the key, and
// whole passes forward and backward are strictly ordered and hold every key published before.
TEST_F(BTreeTest, ConcurrentReadersSeeEveryPublishedKeyInOrder) {
  Random rnd(5);
  std::vector<const char*> all;
  std::set<std::string> seen;
  while (all.size() < 150000) {
    std::string k = RandomKey(rnd);
    k.append(std::to_string(all.size() % 97));  // more distinct keys
    if (seen.insert(k).second) all.push_back(keys.Make(k));
  }
  std::atomic<size_t> published{0};
  std::atomic<bool> done{false};
  std::atomic<uint64_t> overlapping{0};  // reader rounds while the writer was inserting
  auto reader = [&](uint64_t seed) {
    Random r(seed);
    Tree::Iterator it(&tree);
    LengthPrefixedKeys cmp;
    for (uint64_t round = 0; !done.load(std::memory_order_acquire); round++) {
      size_t n = published.load(std::memory_order_acquire);
      if (n == 0) continue;
      if (n < all.size()) overlapping++;
      const char* key = all[r.Uniform(n)];
      it.Seek(key);
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(it.key(), key);
      int steps = 0;
      for (; steps < 4; steps++) {
        const char* before = it.key();
        it.Next();
        if (!it.Valid()) break;
        ASSERT_LT(cmp.Compare(before, it.key()), 0);
      }
      if (!it.Valid()) {
        it.Seek(key);  // walked off the end: start from the key again
      } else {
        for (; steps > 0; steps--) {
          const char* after = it.key();
          it.Prev();
          ASSERT_TRUE(it.Valid());
          ASSERT_LT(cmp.Compare(it.key(), after), 0);
        }
      }
      ASSERT_GE(cmp.Compare(it.key(), key), 0);  // keys inserted meanwhile may stand between
      if (round % 64 == 0) {  // a whole pass, one way or the other, misses no published key
        const bool forward = round % 128 == 0;
        const size_t before = published.load(std::memory_order_acquire);
        size_t seen = 0;
        const char* last = nullptr;
        for (forward ? it.SeekToFirst() : it.SeekToLast(); it.Valid(); forward ? it.Next() : it.Prev(), seen++) {
          if (last != nullptr) {
            ASSERT_LT(forward ? cmp.Compare(last, it.key()) : cmp.Compare(it.key(), last), 0);
          }
          last = it.key();
        }
        ASSERT_GE(seen, before);
      }
    }
  };
  std::thread r1(reader, 1), r2(reader, 2);
  for (size_t i = 0; i < all.size(); i++) {
    // Halfway, until the readers have read: on a loaded machine they may not run before the end.
    while (i == all.size() / 2 && overlapping.load() < 1000) std::this_thread::yield();
    tree.Insert(all[i]);
    published.store(i + 1, std::memory_order_release);
  }
  done = true;
  r1.join();
  r2.join();
  EXPECT_GE(overlapping.load(), 1000u);
  for (const char* k : all) model.insert(Of(k));
  ExpectSameForward(tree, model);
}

}  // namespace
}  // namespace lethe
