#include "db/read_pool.h"

#include <chrono>

#include "util/thread_name.h"

namespace lethe {

namespace {

// How long a helper polls for the next batch, and a caller for the helpers'
// last chunks, before sleeping.
constexpr auto kPollFor = std::chrono::microseconds(50);

// Polls until done() or kPollFor has passed; true if done.
template <typename Done>
bool PollBriefly(Done done) {
  const auto until = std::chrono::steady_clock::now() + kPollFor;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

struct ReadPool::Job {
  size_t chunks = 0;
  const std::function<void(size_t)>* fn = nullptr;  // valid while finished < chunks
  std::atomic<size_t> next{0}, finished{0};
  std::mutex mu;
  std::condition_variable done;
  bool Finished() const { return finished.load(std::memory_order_acquire) == chunks; }
};

ReadPool::ReadPool(int threads) {
  for (int i = 0; i < threads; i++) {
    threads_.emplace_back([this] { Helper(); });
    NameThread(threads_.back(), "lethe-read");
  }
}

ReadPool::~ReadPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ReadPool::Work(Job* job) {
  size_t i;
  while ((i = job->next.fetch_add(1, std::memory_order_relaxed)) < job->chunks) {
    (*job->fn)(i);
    if (job->finished.fetch_add(1, std::memory_order_acq_rel) + 1 == job->chunks) {
      std::lock_guard<std::mutex> l(job->mu);
      job->done.notify_all();
    }
  }
}

void ReadPool::ParallelFor(size_t chunks, const std::function<void(size_t)>& fn) {
  auto job = std::make_shared<Job>();
  job->chunks = chunks;
  job->fn = &fn;
  if (chunks > 1 && !threads_.empty()) {
    bool wake;
    {
      std::lock_guard<std::mutex> l(mu_);
      for (size_t h = 0; h < threads_.size() && h + 1 < chunks; h++) queue_.push_back(job);
      queued_.store(queue_.size(), std::memory_order_release);
      wake = sleeping_ > 0;
    }
    if (wake) cv_.notify_all();
  }
  Work(job.get());
  if (PollBriefly([&] { return job->Finished(); })) return;
  std::unique_lock<std::mutex> l(job->mu);
  job->done.wait(l, [&] { return job->Finished(); });
}

void ReadPool::Helper() {
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> l(mu_);
      if (queue_.empty() && !stopping_) {
        l.unlock();
        PollBriefly([this] { return queued_.load(std::memory_order_acquire) > 0; });
        l.lock();
      }
      sleeping_++;
      cv_.wait(l, [this] { return stopping_ || !queue_.empty(); });
      sleeping_--;
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      queued_.store(queue_.size(), std::memory_order_release);
    }
    Work(job.get());  // nothing left to take: returns at once
  }
}

}  // namespace lethe
