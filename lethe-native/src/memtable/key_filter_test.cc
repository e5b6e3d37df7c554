#include "memtable/key_filter.h"

#include <gtest/gtest.h>

#include <string>

#include "util/hash.h"

namespace lethe {
namespace {

uint64_t HashOf(const std::string& key) { return Hash64(key.data(), key.size()); }

TEST(KeyFilterTest, NoKeyAddedIsMissedAndFewOthersPass) {
  KeyFilter filter(100000);
  EXPECT_LE(filter.bytes(), 100000 * 10 / 8 + 64);
  for (int i = 0; i < 100000; i++) filter.Add(HashOf("key" + std::to_string(i)));
  for (int i = 0; i < 100000; i++) ASSERT_TRUE(filter.MayContain(HashOf("key" + std::to_string(i)))) << i;
  int passed = 0;
  for (int i = 0; i < 100000; i++) passed += filter.MayContain(HashOf("absent" + std::to_string(i)));
  EXPECT_LT(passed, 2500) << "false positives of 100,000 absent keys at 10 bits per key";
  EXPECT_GT(passed, 0) << "a Bloom filter this size lets some absent keys pass";
}

TEST(KeyFilterTest, MoreKeysThanExpectedRaiseFalsePositivesButHideNone) {
  KeyFilter filter(100);
  for (int i = 0; i < 20000; i++) filter.Add(HashOf("key" + std::to_string(i)));
  for (int i = 0; i < 20000; i++) ASSERT_TRUE(filter.MayContain(HashOf("key" + std::to_string(i)))) << i;
  EXPECT_GE(filter.bytes(), 64u);
}

}  // namespace
}  // namespace lethe
