// Page codecs: round trips, the fallback to stored pages, and damaged input.
#include "sst/compression.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "util/random.h"

namespace lethe {
namespace {

std::string Text(size_t n) {
  std::string s;
  while (s.size() < n) s += "state of key " + std::to_string(s.size() % 97) + "; ";
  s.resize(n);
  return s;
}

std::string RandomBytes(size_t n, uint64_t seed) {
  Random rnd(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rnd.Uniform(256));
  return s;
}

TEST(CompressionTest, CompressiblePagesRoundTripWithEveryCodec) {
  const std::string raw = Text(4096);
  for (Compression c : {Compression::kLZ4, Compression::kZSTD}) {
    SCOPED_TRACE(CompressionName(c));
    std::string stored;
    ASSERT_EQ(c, CompressPage(c, raw, &stored));
    EXPECT_LT(stored.size(), raw.size() / 2);
    std::unique_ptr<char[]> out(new char[raw.size()]);
    ASSERT_TRUE(UncompressPage(c, stored, out.get(), raw.size()).ok());
    EXPECT_EQ(raw, std::string(out.get(), raw.size()));
  }
}

TEST(CompressionTest, IncompressiblePagesAreStoredAsTheyAre) {
  const std::string raw = RandomBytes(4096, 3);
  std::string stored;
  EXPECT_EQ(Compression::kNone, CompressPage(Compression::kLZ4, raw, &stored));
  EXPECT_EQ(Compression::kNone, CompressPage(Compression::kZSTD, raw, &stored));
  EXPECT_EQ(Compression::kNone, CompressPage(Compression::kNone, Text(4096), &stored));
}

// Beyond kMaxCompressionRatio a page is stored raw, so a reader can bound
// the size it allocates for a page by its stored size.
TEST(CompressionTest, PagesBeyondTheRatioBoundAreStoredAsTheyAre) {
  const std::string zeros(1 << 20, '\0');
  std::string stored;
  EXPECT_EQ(Compression::kNone, CompressPage(Compression::kZSTD, zeros, &stored));
  // Words in random order: compressible, but far from 255x.
  Random rnd(5);
  std::string bounded;
  while (bounded.size() < (64 << 10)) bounded += "key" + std::to_string(rnd.Uniform(1000)) + ' ';
  EXPECT_EQ(Compression::kZSTD, CompressPage(Compression::kZSTD, bounded, &stored));
  EXPECT_LE(bounded.size(), stored.size() * kMaxCompressionRatio);
}

TEST(CompressionTest, DamagedOrMissizedPagesAreCorruption) {
  const std::string raw = Text(4096);
  for (Compression c : {Compression::kLZ4, Compression::kZSTD}) {
    SCOPED_TRACE(CompressionName(c));
    std::string stored;
    ASSERT_EQ(c, CompressPage(c, raw, &stored));
    std::unique_ptr<char[]> out(new char[raw.size() + 1]);
    EXPECT_TRUE(UncompressPage(c, stored, out.get(), raw.size() - 1).IsCorruption());
    EXPECT_TRUE(UncompressPage(c, stored, out.get(), raw.size() + 1).IsCorruption());
    EXPECT_TRUE(UncompressPage(c, stored.substr(0, stored.size() / 2), out.get(), raw.size()).IsCorruption());
    EXPECT_TRUE(UncompressPage(c, RandomBytes(stored.size(), 9), out.get(), raw.size()).IsCorruption());
  }
  std::unique_ptr<char[]> out(new char[16]);
  EXPECT_TRUE(UncompressPage(static_cast<Compression>(7), "abc", out.get(), 16).IsCorruption());
  EXPECT_FALSE(KnownCompression(3));
  EXPECT_TRUE(KnownCompression(2));
}

}  // namespace
}  // namespace lethe
