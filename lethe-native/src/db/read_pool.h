// ReadPool: a few threads that help one reader through a large batch (a
// MultiGet): the caller and the helpers take chunks of the batch from a
// shared counter until none is left, so a helper that wakes late costs
// nothing but its wake-up, and the caller never waits for a chunk no one
// started.
//
// Batches tend to come in streams and a chunk takes microseconds, while a
// sleeping thread takes tens of microseconds to wake. So an idle helper
// polls for the next batch for a short while before it sleeps, and a caller
// polls for the helpers' last chunks before it sleeps. Both yield while they
// poll, so a thread with real work on the same core runs first.
//
// Thread-safety: ParallelFor may be called from many threads at once.
#pragma once

#include <atomic>
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
  size_t threads() const { return threads_.size(); }

 private:
  struct Job;
  void Helper();
  static void Work(Job* job);

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;  // mu_
  std::atomic<size_t> queued_{0};           // queue_.size(), read without mu_
  int sleeping_ = 0;                        // mu_: helpers waiting on cv_
  bool stopping_ = false;                   // mu_
  std::vector<std::thread> threads_;
};

}  // namespace lethe
