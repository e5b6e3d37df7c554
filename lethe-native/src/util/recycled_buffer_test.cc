// RecycledBuffer: sizes, reuse by the freeing thread, the stock's bound.
#include "util/recycled_buffer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

namespace lethe {
namespace {

// Runs fn on a thread of its own, whose stock starts empty.
template <typename Fn>
void OnNewThread(Fn fn) {
  std::thread t(fn);
  t.join();
}

TEST(RecycledBufferTest, HoldsAtLeastTheSizeAskedFor) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{127}, size_t{4101}, size_t{65536}, size_t{70000}}) {
    RecycledBuffer b(size);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_GE(b.capacity(), size);
    std::memset(b.data(), 0x5a, b.capacity());  // the whole capacity is usable
  }
  RecycledBuffer moved(RecycledBuffer(100));
  EXPECT_GE(moved.capacity(), 100u);
  RecycledBuffer empty;
  empty = std::move(moved);
  EXPECT_EQ(moved.data(), nullptr);
  EXPECT_GE(empty.capacity(), 100u);
}

TEST(RecycledBufferTest, TheFreeingThreadReusesItsBuffers) {
  OnNewThread([] {
    if (RecycledBuffer::StockLimit() == 0) {
      // Under AddressSanitizer: nothing is kept, so every use after free shows.
      { RecycledBuffer b(4096); }
      EXPECT_EQ(RecycledBuffer::StockedBytes(), 0u);
      return;
    }
    char* first;
    size_t capacity, held;
    {
      RecycledBuffer b(4101);
      first = b.data();
      capacity = b.capacity();
      held = RecycledBuffer::StockedBytes();
    }
    EXPECT_EQ(RecycledBuffer::StockedBytes(), held + capacity);
    RecycledBuffer again(4101);  // its class starts with the buffer freed last
    EXPECT_EQ(again.data(), first);
    EXPECT_EQ(again.capacity(), capacity);
    EXPECT_EQ(RecycledBuffer::StockedBytes(), held);
  });
}

TEST(RecycledBufferTest, TheStockStaysWithinItsLimit) {
  OnNewThread([] {
    std::vector<RecycledBuffer> many;
    for (int i = 0; i < 200; i++) many.emplace_back(4096 + (i % 8) * 100);
    many.emplace_back(1 << 20);  // beyond every class: never kept
    many.clear();
    EXPECT_LE(RecycledBuffer::StockedBytes(), RecycledBuffer::StockLimit());
    if (RecycledBuffer::StockLimit() > 0) {
      EXPECT_GT(RecycledBuffer::StockedBytes(), RecycledBuffer::StockLimit() / 2);
    }
  });
}

TEST(RecycledBufferTest, ABufferFreedOnAnotherThreadJoinsThatThreadsStock) {
  std::vector<RecycledBuffer> made;
  for (int i = 0; i < 4; i++) made.emplace_back(8000);
  size_t stocked_there = 0;
  std::thread other([&] {
    const size_t before = RecycledBuffer::StockedBytes();
    made.clear();
    stocked_there = RecycledBuffer::StockedBytes() - before;
  });  // the thread's stock is freed when it ends
  other.join();
  EXPECT_EQ(stocked_there, RecycledBuffer::StockLimit() > 0 ? 4 * 8064u : 0u);
}

}  // namespace
}  // namespace lethe
