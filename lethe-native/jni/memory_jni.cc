// The JNI bridge's memory budgets (io.lethe.engine.MemoryBudget) and the C
// allocator's heap (io.lethe.engine.HeapUsage).
#include <jni.h>

#include <memory>

#include "jni_support.h"
#include "lethe/heap_usage.h"
#include "lethe/memory_budget.h"

#if __has_include("io_lethe_engine_internal_Native.h")
#include "io_lethe_engine_internal_Native.h"  // javac -h: checks the signatures below
#endif

using namespace lethe_jni;  // NOLINT: the bridge's own helpers

extern "C" {

// A memory budget crosses as a pointer to a heap-held shared_ptr: each
// database opened with it takes its own reference.
JNIEXPORT jlong JNICALL Java_io_lethe_engine_internal_Native_newMemoryBudget(JNIEnv* env, jclass, jlong capacity,
                                                                             jdouble write_buffer_ratio,
                                                                             jboolean bound_table_readers) {
  return Guarded<jlong>(env, 0, [&]() -> jlong {
    std::shared_ptr<lethe::MemoryBudget> budget;
    Status s = lethe::MemoryBudget::New(capacity < 0 ? 0 : static_cast<size_t>(capacity), write_buffer_ratio,
                                        &budget, bound_table_readers);
    if (!s.ok()) {
      ThrowStatus(env, s);
      return 0;
    }
    g_live_objects++;
    return reinterpret_cast<jlong>(new std::shared_ptr<lethe::MemoryBudget>(std::move(budget)));
  });
}

JNIEXPORT jlongArray JNICALL Java_io_lethe_engine_internal_Native_memoryBudgetUsage(JNIEnv* env, jclass,
                                                                                    jlong budget) {
  return Guarded<jlongArray>(env, nullptr, [&]() -> jlongArray {
    lethe::MemoryBudget::Usage u = (*reinterpret_cast<std::shared_ptr<lethe::MemoryBudget>*>(budget))->GetUsage();
    const jlong values[] = {static_cast<jlong>(u.capacity), static_cast<jlong>(u.write_buffers),
                            static_cast<jlong>(u.table_readers), static_cast<jlong>(u.pinned_table_readers),
                            static_cast<jlong>(u.page_cache)};
    jlongArray r = env->NewLongArray(5);
    if (r != nullptr) env->SetLongArrayRegion(r, 0, 5, values);
    return r;
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_closeMemoryBudget(JNIEnv* env, jclass, jlong budget) {
  Guarded<int>(env, 0, [&] {
    if (budget != 0) {
      delete reinterpret_cast<std::shared_ptr<lethe::MemoryBudget>*>(budget);
      g_live_objects--;
    }
    return 0;
  });
}

// {mapped, in use, free} bytes.
JNIEXPORT jlongArray JNICALL Java_io_lethe_engine_internal_Native_heapUsage(JNIEnv* env, jclass) {
  return Guarded<jlongArray>(env, nullptr, [&]() -> jlongArray {
    const lethe::HeapUsage u = lethe::GetHeapUsage();
    const jlong values[] = {static_cast<jlong>(u.mapped), static_cast<jlong>(u.in_use), static_cast<jlong>(u.free)};
    jlongArray r = env->NewLongArray(3);
    if (r != nullptr) env->SetLongArrayRegion(r, 0, 3, values);
    return r;
  });
}

}  // extern "C"
