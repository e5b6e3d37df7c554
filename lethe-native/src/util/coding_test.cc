#include "util/coding.h"

#include <gtest/gtest.h>

namespace lethe {

TEST(CodingTest, VarintRoundTripAndBounds) {
  std::string s;
  std::vector<uint64_t> values = {0, 1, 127, 128, 16383, 16384, UINT32_MAX, UINT64_MAX - 1, UINT64_MAX};
  for (uint64_t v : values) PutVarint64(&s, v);
  std::string_view in(s);
  for (uint64_t v : values) {
    uint64_t got;
    ASSERT_TRUE(GetVarint64(&in, &got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(in.empty());
  // Truncated input is rejected, never over-read.
  std::string t;
  PutVarint64(&t, UINT64_MAX);
  std::string_view cut(t.data(), t.size() - 1);
  uint64_t v;
  EXPECT_FALSE(GetVarint64(&cut, &v));
  // A varint32 that overflows 32 bits is rejected.
  std::string big;
  PutVarint64(&big, 1ull << 33);
  std::string_view b(big);
  uint32_t v32;
  EXPECT_FALSE(GetVarint32(&b, &v32));
}

// Every value of one, two and three bytes decodes as written, and a varint
// cut after any of its bytes is rejected without reading past the cut.
TEST(CodingTest, Varint32OfEveryShortLength) {
  for (uint32_t v = 0; v < (1u << 15); v++) {
    std::string s;
    PutVarint32(&s, v);
    s.push_back('\x7f');  // a byte after it, never part of it
    uint32_t got = 0;
    const char* end = GetVarint32Ptr(s.data(), s.data() + s.size(), &got);
    ASSERT_EQ(end, s.data() + s.size() - 1) << v;
    ASSERT_EQ(got, v);
    for (size_t cut = 0; cut + 1 < s.size(); cut++) {
      ASSERT_EQ(GetVarint32Ptr(s.data(), s.data() + cut, &got), nullptr) << v << " cut at " << cut;
    }
  }
}

TEST(CodingTest, LengthPrefixed) {
  std::string s;
  PutLengthPrefixed(&s, "hello");
  PutLengthPrefixed(&s, "");
  std::string_view in(s), a, b;
  ASSERT_TRUE(GetLengthPrefixed(&in, &a));
  ASSERT_TRUE(GetLengthPrefixed(&in, &b));
  EXPECT_EQ(a, "hello");
  EXPECT_EQ(b, "");
  std::string_view bad("\x05hi");
  EXPECT_FALSE(GetLengthPrefixed(&bad, &a));
}

}  // namespace lethe
