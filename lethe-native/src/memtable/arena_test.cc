#include "memtable/arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

namespace lethe {
namespace {

bool HugeAligned(const char* p) { return reinterpret_cast<uintptr_t>(p) % Arena::kHugeBlockSize == 0; }

TEST(ArenaTest, SmallArenasKeepSmallBlocksAndLargeOnesTakeHugePageBlocks) {
  Arena arena;
  std::vector<std::pair<char*, size_t>> given;
  size_t huge_starts = 0;
  // 100 B entries up to 12 MiB, each filled with its own byte.
  for (size_t i = 0; arena.MemoryUsage() < 3 * Arena::kHugeAfter; i++) {
    const size_t before = arena.MemoryUsage();
    char* p = arena.AllocateAligned(100, 8);
    ASSERT_EQ(0u, reinterpret_cast<uintptr_t>(p) % 8);
    std::memset(p, static_cast<int>(i & 0xff), 100);
    given.emplace_back(p, i);
    const size_t grown = arena.MemoryUsage() - before;
    if (grown == 0) continue;  // from the current block
    if (before < Arena::kHugeAfter) {
      EXPECT_EQ(Arena::kBlockSize + sizeof(void*), grown) << "a small arena grows by 64 KiB";
    } else {
      EXPECT_EQ(Arena::kHugeBlockSize + sizeof(void*), grown) << "a large arena grows by 2 MiB";
      EXPECT_TRUE(HugeAligned(p)) << "a huge-page block starts on a 2 MiB boundary";
      huge_starts++;
    }
  }
  EXPECT_GE(huge_starts, 4u);
  // Nothing handed out was overwritten by a later allocation.
  for (const auto& [p, i] : given) {
    for (size_t b = 0; b < 100; b++) ASSERT_EQ(static_cast<char>(i & 0xff), p[b]) << "entry " << i;
  }
  // A large value gets a block of its own and leaves the current block in use.
  char* before = arena.Allocate(8);
  char* big = arena.Allocate(Arena::kHugeBlockSize);
  std::memset(big, 1, Arena::kHugeBlockSize);
  EXPECT_EQ(before + 8, arena.Allocate(8));
}

}  // namespace
}  // namespace lethe
