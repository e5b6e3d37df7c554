#include "util/crc32c.h"

#include <gtest/gtest.h>

#include <string>

#include "util/random.h"

namespace lethe {
namespace {

// CRC32C one bit at a time, straight from the definition.
uint32_t BitwiseCrc(const std::string& s) {
  uint32_t c = ~0u;
  for (unsigned char byte : s) {
    c ^= byte;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
  }
  return ~c;
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

// Every length around the stream boundaries of the fast path, at every
// alignment, and split anywhere.
TEST(Crc32cTest, MatchesTheDefinitionAtEveryLengthAndSplit) {
  Random rnd(7);
  std::string buf(4 * 3 * 1024 + 64, '\0');
  for (char& ch : buf) ch = static_cast<char>(rnd.Next());
  for (size_t len : {0, 1, 7, 8, 9, 383, 384, 385, 767, 768, 3071, 3072, 3073, 4096, 4104, 3 * 3072 + 5}) {
    for (size_t offset = 0; offset < 8; offset++) {
      const std::string s = buf.substr(offset, len);
      const uint32_t want = BitwiseCrc(s);
      ASSERT_EQ(crc32c::Value(s.data(), s.size()), want) << "len " << len << " offset " << offset;
      const size_t split = len == 0 ? 0 : rnd.Uniform(len + 1);
      ASSERT_EQ(crc32c::Extend(crc32c::Value(s.data(), split), s.data() + split, len - split), want)
          << "len " << len << " split " << split;
    }
  }
  for (int i = 0; i < 300; i++) {
    const size_t len = rnd.Uniform(buf.size());
    const std::string s = buf.substr(0, len);
    ASSERT_EQ(crc32c::Value(s.data(), s.size()), BitwiseCrc(s)) << "len " << len;
  }
}

}  // namespace
}  // namespace lethe
