#include "util/coding.h"

#include <gtest/gtest.h>

#include "util/crc32c.h"

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

TEST(Crc32cTest, KnownValues) {
  // RFC 3720 test vectors.
  std::string zeros(32, '\0'), ones(32, '\xff');
  EXPECT_EQ(crc32c::Value(zeros.data(), zeros.size()), 0x8a9136aau);
  EXPECT_EQ(crc32c::Value(ones.data(), ones.size()), 0x62a8ab43u);
  std::string seq;
  for (int i = 0; i < 32; i++) seq.push_back(static_cast<char>(i));
  EXPECT_EQ(crc32c::Value(seq.data(), seq.size()), 0x46dd794eu);
  EXPECT_EQ(crc32c::Value("123456789", 9), 0xe3069283u);
  uint32_t c = crc32c::Value("hello world", 11);
  EXPECT_EQ(crc32c::Extend(crc32c::Value("hello ", 6), "world", 5), c);
  EXPECT_EQ(crc32c::Unmask(crc32c::Mask(c)), c);
  EXPECT_NE(crc32c::Mask(c), c);
}

}  // namespace lethe
