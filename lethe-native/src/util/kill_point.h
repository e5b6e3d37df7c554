// Kill points: named places in the engine where a crash test may end the
// process, to prove that recovery loses nothing acknowledged from any point
// of a flush, a compaction, a manifest write or a page drop
// (tools/lethe_crash_test.cc). A test may also hold a thread at one
// (test/test_util.h, KillPointGate).
//
// With no handler installed (every process but a crash test's child) a kill
// point costs one relaxed atomic load.
//
// Thread-safety: SetKillPointHandler may be called at any time; handlers run
// on whichever thread reaches the point.
#pragma once

#include <atomic>

namespace lethe {

// Called with the point's name; it may end the process (or return).
using KillPointHandler = void (*)(const char* name);

void SetKillPointHandler(KillPointHandler handler);

namespace internal {
extern std::atomic<KillPointHandler> kill_point_handler;
}  // namespace internal

inline void KillPoint(const char* name) {
  KillPointHandler h = internal::kill_point_handler.load(std::memory_order_relaxed);
  if (h != nullptr) h(name);
}

}  // namespace lethe
