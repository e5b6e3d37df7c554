// What every part of the JNI bridge shares: turning a Status or a C++
// exception into a Java exception (Guarded, ThrowStatus), copying byte[] and
// String arguments, handles, and the count of live native objects.
//
// Thread-safety: the functions are safe for concurrent use; InitExceptions
// runs once, in JNI_OnLoad, before any other.
#pragma once

#include <jni.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lethe/db.h"

namespace lethe_jni {

using lethe::Status;

// Handles created and not yet freed (io.lethe.engine.internal.Native.liveObjects).
extern std::atomic<int64_t> g_live_objects;

// Looks up io.lethe.engine.LetheException; false if it is missing.
bool InitExceptions(JNIEnv* env);

// Throws s as a LetheException, unless an exception is pending already.
void ThrowStatus(JNIEnv* env, const Status& s);
// Throws a new `cls` (a JNI class name) with msg, unless one is pending.
void ThrowJava(JNIEnv* env, const char* cls, const char* msg);

// Runs body; converts an escaping C++ exception into a Java exception.
template <typename R, typename F>
R Guarded(JNIEnv* env, R on_error, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    ThrowJava(env, "java/lang/OutOfMemoryError", "native allocation failed in the Lethe engine");
  } catch (const std::exception& e) {
    ThrowStatus(env, Status::IOError("internal error in the Lethe engine", e.what()));
  } catch (...) {
    ThrowStatus(env, Status::IOError("internal error in the Lethe engine"));
  }
  return on_error;
}

// A byte[] copied into native memory (on the stack when small).
class JBytes {
 public:
  JBytes(JNIEnv* env, jbyteArray array) {
    if (array == nullptr) return;
    size_ = static_cast<size_t>(env->GetArrayLength(array));
    char* dst = size_ <= sizeof(stack_) ? stack_ : (heap_ = std::make_unique<char[]>(size_)).get();
    env->GetByteArrayRegion(array, 0, static_cast<jsize>(size_), reinterpret_cast<jbyte*>(dst));
    data_ = dst;
    valid_ = true;
  }
  std::string_view view() const { return {data_, size_}; }
  bool valid() const { return valid_; }

 private:
  char stack_[256];
  std::unique_ptr<char[]> heap_;
  const char* data_ = stack_;
  size_t size_ = 0;
  bool valid_ = false;
};

std::string JString(JNIEnv* env, jstring s);
jbyteArray ToJava(JNIEnv* env, std::string_view bytes);
// A String[] of `strings`; null with a Java exception pending when memory ran out.
jobjectArray ToJava(JNIEnv* env, const std::vector<std::string>& strings);

inline lethe::DB* Db(jlong h) { return reinterpret_cast<lethe::DB*>(h); }
inline lethe::ColumnFamilyHandle* Cf(jlong h) { return reinterpret_cast<lethe::ColumnFamilyHandle*>(h); }

inline lethe::WriteOptions WriteFlags(jint flags) {
  lethe::WriteOptions o;
  o.sync = (flags & 1) != 0;
  o.disable_wal = (flags & 2) != 0;
  return o;
}

// A snapshot given by its sequence number (the engine reads only sequence()).
class SequenceSnapshot final : public lethe::Snapshot {
 public:
  explicit SequenceSnapshot(uint64_t seq) : seq_(seq) {}
  ~SequenceSnapshot() override = default;
  uint64_t sequence() const override { return seq_; }

 private:
  uint64_t seq_;
};

}  // namespace lethe_jni
