// Names a thread for tools that show threads (top -H, perf,
// gdb, /proc/<pid>/task/*/comm). Without a name, an engine thread carries
// the name of the thread that opened the database (a Flink task's, say), so
// its work is counted as that task's. Linux keeps 15 characters.
#pragma once

#include <pthread.h>

#include <thread>

namespace lethe {

// Named by its creator, so the name is there before the thread runs.
inline void NameThread(std::thread& t, const char* name) { pthread_setname_np(t.native_handle(), name); }

}  // namespace lethe
