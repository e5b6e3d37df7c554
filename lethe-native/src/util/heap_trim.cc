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

bool HeapTrimmer::Due(uint64_t now_us, uint64_t interval_us) const {
  const uint64_t last = last_us_.load(std::memory_order_acquire);
  return last == kNever || (now_us >= last && now_us - last >= interval_us);
}

bool HeapTrimmer::MaybeRelease(uint64_t now_us, uint64_t interval_us) {
  if (interval_us == 0 || !Due(now_us, interval_us)) return false;
  if (busy_.exchange(true, std::memory_order_acquire)) return false;
  const bool due = Due(now_us, interval_us);  // another caller may have released since
  if (due) {
    release_();
    last_us_.store(now_us, std::memory_order_release);
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
