#include "util/heap_trim.h"

#include <chrono>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace lethe {

void ReleaseFreedHeap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

bool HeapTrimmer::MaybeRelease(uint64_t now_us, uint64_t interval_us) {
  if (interval_us == 0) return false;
  if (released_.load(std::memory_order_acquire) && now_us - last_us_.load(std::memory_order_relaxed) < interval_us) {
    return false;
  }
  if (busy_.exchange(true, std::memory_order_acquire)) return false;
  // Checked again: another caller may have released since.
  const bool due = !released_.load(std::memory_order_relaxed) ||
                   now_us - last_us_.load(std::memory_order_relaxed) >= interval_us;
  if (due) {
    release_();
    last_us_.store(now_us, std::memory_order_relaxed);
    released_.store(true, std::memory_order_release);
  }
  busy_.store(false, std::memory_order_release);
  return due;
}

HeapTrimmer& HeapTrimmer::Process() {
  static HeapTrimmer trimmer;
  return trimmer;
}

uint64_t HeapTrimmer::NowMicros() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

}  // namespace lethe
