#include "db/read_pool.h"

#include <atomic>

namespace lethe {

struct ReadPool::Job {
  size_t chunks = 0;
  const std::function<void(size_t)>* fn = nullptr;  // valid while finished < chunks
  std::atomic<size_t> next{0}, finished{0};
  std::mutex mu;
  std::condition_variable done;
};

ReadPool::ReadPool(int threads) {
  for (int i = 0; i < threads; i++) threads_.emplace_back([this] { Helper(); });
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
    {
      std::lock_guard<std::mutex> l(mu_);
      for (size_t h = 0; h < threads_.size() && h + 1 < chunks; h++) queue_.push_back(job);
    }
    cv_.notify_all();
  }
  Work(job.get());
  std::unique_lock<std::mutex> l(job->mu);
  job->done.wait(l, [&] { return job->finished.load(std::memory_order_acquire) == chunks; });
}

void ReadPool::Helper() {
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Work(job.get());  // nothing left to take: returns at once
  }
}

}  // namespace lethe
