#include "memtable/skiplist.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>

#include "util/random.h"

namespace lethe {
namespace {

struct CStringCompare {
  int operator()(const char* a, const char* b) const { return std::strcmp(a, b); }
};
using List = SkipList<const char*, CStringCompare>;

// Inserts `key` behind its node, naming `group`.
void Insert(List* list, const std::string& key, uint64_t group) {
  list->InsertInline(key.size() + 1, group, [&](char* buf) { std::memcpy(buf, key.c_str(), key.size() + 1); });
}

void ExpectSorted(const List& list, const std::set<std::string>& model) {
  List::Iterator it(&list);
  auto m = model.begin();
  for (it.SeekToFirst(); it.Valid(); it.Next(), ++m) {
    ASSERT_NE(m, model.end());
    ASSERT_STREQ(it.key(), m->c_str());
  }
  EXPECT_EQ(m, model.end());
}

// Every key names one of three groups, so a group's finger mostly sits far from the next key of
// that group: only the checks against the key and its neighbours keep the order.
TEST(SkipListTest, FingersOfGroupsSharedByUnrelatedKeysNeverMisplaceAKey) {
  Arena arena;
  List list(CStringCompare(), &arena);
  Random rnd(7);
  std::set<std::string> model;
  while (model.size() < 30000) {
    char key[16];
    std::snprintf(key, sizeof(key), "%09llu", static_cast<unsigned long long>(rnd.Uniform(1000000000)));
    if (!model.insert(key).second) continue;
    Insert(&list, key, rnd.Uniform(3) + 1);
  }
  ExpectSorted(list, model);
}

// Keys arriving in order within each of many groups (as new versions of a key arrive in front of
// its older ones): most inserts are linked by a finger.
TEST(SkipListTest, FingersLinkKeysThatArriveWhereTheirGroupLastGrew) {
  Arena arena;
  List list(CStringCompare(), &arena);
  Random rnd(11);
  std::set<std::string> model;
  int next_in_group[500] = {};
  for (int i = 0; i < 40000; i++) {
    const int group = static_cast<int>(rnd.Uniform(500));
    char key[32];
    // Descending within a group: each insert goes in front of the group's previous one.
    std::snprintf(key, sizeof(key), "%05d-%07d", group, 9999999 - next_in_group[group]++);
    model.insert(key);
    Insert(&list, key, static_cast<uint64_t>(group) + 1);
  }
  ExpectSorted(list, model);
  EXPECT_GT(list.finger_links(), 30000u);
  EXPECT_GT(list.FingerBytes(), 0u);
}

}  // namespace
}  // namespace lethe
