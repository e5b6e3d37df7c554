// Giving freed heap memory back to the operating system.
//
// glibc's malloc keeps what a program frees for later use, and gives back
// only the free end of each heap. A compaction allocates and frees large
// buffers, a flush frees a memtable, a closed database frees everything it
// held; other allocations land between them, so the freed memory stays
// resident. Measured: a database in a 256 MiB budget that holds 246 MiB had a
// resident set of 353 MiB, and 663 MiB after it was closed and opened again,
// while the engine held the same 258 MiB. malloc_trim gives back every free
// page inside the heaps (it took 11-35 ms at those sizes).
//
// Thread-safety: HeapTrimmer is safe for concurrent use.
#pragma once

#include <atomic>
#include <cstdint>

namespace lethe {

// Gives free heap pages back to the operating system: malloc_trim(0) with
// glibc, nothing with other C libraries (or under a sanitizer's allocator,
// which ignores it).
void ReleaseFreedHeap();

// Rate-limits ReleaseFreedHeap: the heap is shared by the whole process, so
// every database of the process shares one trimmer (Process()).
class HeapTrimmer {
 public:
  explicit HeapTrimmer(void (*release)() = &ReleaseFreedHeap) : release_(release) {}

  // Releases if interval_us > 0 and at least interval_us passed since this
  // trimmer last released (or it never did); true if it released. While one
  // caller releases, the others return false at once.
  bool MaybeRelease(uint64_t now_us, uint64_t interval_us);

  // The trimmer of every database in this process.
  static HeapTrimmer& Process();
  // Microseconds of a monotonic clock: the time MaybeRelease takes in real use.
  static uint64_t NowMicros();

 private:
  static constexpr uint64_t kNever = UINT64_MAX;
  // Whether interval_us passed since the last release (or none happened).
  bool Due(uint64_t now_us, uint64_t interval_us) const;

  void (*const release_)();
  std::atomic<bool> busy_{false};
  std::atomic<uint64_t> last_us_{kNever};  // when this trimmer last released
};

}  // namespace lethe
