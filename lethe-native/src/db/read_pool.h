// ReadPool: a few threads that help one reader through a large batch (a
// MultiGet): the caller and the helpers take chunks of the batch from a
// shared counter until none is left, so a helper that wakes late costs
// nothing but its wake-up, and the caller never waits for a chunk no one
// started.
//
// Thread-safety: ParallelFor may be called from many threads at once.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace lethe {

class ReadPool {
 public:
  explicit ReadPool(int threads);
  ~ReadPool();
  ReadPool(const ReadPool&) = delete;
  ReadPool& operator=(const ReadPool&) = delete;

  // Runs fn(i) for every i in [0, chunks), on the calling thread and the
  // pool's; returns when all have run. fn must not throw.
  void ParallelFor(size_t chunks, const std::function<void(size_t)>& fn);

 private:
  struct Job;
  void Helper();
  static void Work(Job* job);

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;  // mu_
  bool stopping_ = false;                   // mu_
  std::vector<std::thread> threads_;
};

}  // namespace lethe
