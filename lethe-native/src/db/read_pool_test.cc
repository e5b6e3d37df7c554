#include "db/read_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace lethe {
namespace {

TEST(ReadPoolTest, EveryChunkRunsOnceAlsoWithManyCallers) {
  ReadPool pool(2);
  std::vector<std::thread> callers;
  std::atomic<int> bad{0};
  for (int c = 0; c < 4; c++) {
    callers.emplace_back([&] {
      for (int round = 0; round < 200; round++) {
        const size_t chunks = 1 + static_cast<size_t>(round % 37);
        std::vector<std::atomic<int>> runs(chunks);
        pool.ParallelFor(chunks, [&](size_t i) { runs[i].fetch_add(1); });
        for (auto& r : runs) bad += r.load() == 1 ? 0 : 1;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(0, bad.load());
}

TEST(ReadPoolTest, HelpersTakeChunksAndWithoutHelpersTheCallerRunsAll) {
  ReadPool pool(1);
  std::atomic<bool> helped{false};
  const auto caller = std::this_thread::get_id();
  // Each chunk takes a moment, so the helper wakes before the caller has run them all; on a loaded
  // machine it may take a while to be scheduled at all.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!helped && std::chrono::steady_clock::now() < deadline) {
    pool.ParallelFor(64, [&](size_t) {
      if (std::this_thread::get_id() != caller) helped = true;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    });
  }
  EXPECT_TRUE(helped.load()) << "a helper ran some chunks";
  ReadPool none(0);
  int ran = 0;
  none.ParallelFor(5, [&](size_t) { ran++; });
  EXPECT_EQ(5, ran);
}

}  // namespace
}  // namespace lethe
