#include "memtable/arena.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

namespace lethe {
namespace {

bool HugeAligned(const char* p) { return reinterpret_cast<uintptr_t>(p) % Arena::kHugeBlockSize == 0; }

// Whether the page at p is mapped in this process (mincore fails with ENOMEM on an unmapped range).
bool Mapped(const char* p) {
  unsigned char resident = 0;
  void* page = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) & ~uintptr_t{4095});
  if (mincore(page, 4096, &resident) == 0) return true;
  EXPECT_EQ(ENOMEM, errno);
  return false;
}

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

// A memtable's 2 MiB blocks go back to the operating system with the arena, not into malloc's heap
// (where they stayed resident until the next heap trim).
TEST(ArenaTest, HugeBlocksAreUnmappedWithTheArena) {
  // As in a process that has run a while: glibc raises its mmap threshold past the size of a mapped
  // chunk once one is freed, so later blocks of a few MiB come from the heap unless mapped apart.
  void* volatile mapped_chunk = std::malloc(8u << 20);  // volatile: the pair is not optimised away
  std::free(mapped_chunk);
  std::vector<char*> huge;
  void* later = nullptr;  // an allocation made after the arena's, alive after it
  {
    Arena arena;
    while (arena.MemoryUsage() < Arena::kHugeAfter + 4 * Arena::kHugeBlockSize) {
      const size_t before = arena.MemoryUsage();
      char* p = arena.Allocate(1000);
      if (before >= Arena::kHugeAfter && arena.MemoryUsage() > before) huge.push_back(p);
    }
    ASSERT_GE(huge.size(), 4u);
    later = std::malloc(64 << 10);
    for (char* p : huge) {
      std::memset(p, 7, Arena::kHugeBlockSize);
      EXPECT_TRUE(Mapped(p));
      EXPECT_TRUE(Mapped(p + Arena::kHugeBlockSize - 1));
    }
  }
  for (char* p : huge) {
    EXPECT_FALSE(Mapped(p)) << "a huge block outlived its arena";
    EXPECT_FALSE(Mapped(p + Arena::kHugeBlockSize - 1));
  }
  std::free(later);
}

}  // namespace
}  // namespace lethe
