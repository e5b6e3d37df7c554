#include "util/heap_trim.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "util/sanitizers.h"

namespace lethe {
namespace {

int releases = 0;
void CountRelease() { releases++; }

TEST(HeapTrimmerTest, ReleasesAtMostOncePerInterval) {
  releases = 0;
  HeapTrimmer t(&CountRelease);
  EXPECT_TRUE(t.MaybeRelease(5, 100));  // never released: due at once
  EXPECT_FALSE(t.MaybeRelease(6, 100));
  EXPECT_FALSE(t.MaybeRelease(104, 100));
  EXPECT_TRUE(t.MaybeRelease(105, 100));
  EXPECT_FALSE(t.MaybeRelease(200, 100));
  EXPECT_EQ(releases, 2);
}

TEST(HeapTrimmerTest, ZeroIntervalNeverReleases) {
  releases = 0;
  HeapTrimmer t(&CountRelease);
  EXPECT_FALSE(t.MaybeRelease(0, 0));
  EXPECT_FALSE(t.MaybeRelease(1'000'000'000, 0));
  EXPECT_EQ(releases, 0);
}

std::atomic<int> concurrent_releases{0};
void SlowRelease() {
  concurrent_releases++;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

TEST(HeapTrimmerTest, ConcurrentCallersReleaseOnce) {
  concurrent_releases = 0;
  HeapTrimmer t(&SlowRelease);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; i++) threads.emplace_back([&] { t.MaybeRelease(1000, 1000); });
  for (auto& th : threads) th.join();
  EXPECT_EQ(concurrent_releases.load(), 1);
}

// Only where ReleaseFreedHeap does something: glibc's own allocator, not a
// sanitizer's replacement (which ignores malloc_trim).
#if defined(__GLIBC__) && !LETHE_SANITIZER_ALLOCATOR
long ResidentKiB() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Freed small blocks between live ones stay resident until released: free()
// gives back only a heap's free end.
TEST(HeapTrimmerTest, ReleaseGivesFreedPagesBack) {
  constexpr size_t kBlocks = 64 << 10, kBlock = 2000;  // 125 MiB in blocks below the mmap threshold
  std::vector<std::unique_ptr<char[]>> blocks(kBlocks);
  for (auto& b : blocks) {
    b.reset(new char[kBlock]);
    std::fill(b.get(), b.get() + kBlock, 'x');
  }
  const long filled = ResidentKiB();
  for (size_t i = 0; i < kBlocks; i++) {
    if (i % 64 != 63) blocks[i].reset();  // every 64th stays: 124 KiB free runs between live blocks
  }
  const long freed = ResidentKiB();
  ReleaseFreedHeap();
  const long released = ResidentKiB();
  ASSERT_GT(filled, 0);
  EXPECT_GT(freed - released, 64 << 10) << "filled " << filled << " KiB, freed " << freed << ", released " << released;
}
#endif

}  // namespace
}  // namespace lethe
