// The JNI bridge's reads: Get, MultiGet (io.lethe.engine.MultiGetBatch) and
// iterators (io.lethe.engine.LetheIterator).
#include <jni.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "jni_support.h"
#include "lethe/db.h"

#if __has_include("io_lethe_engine_internal_Native.h")
#include "io_lethe_engine_internal_Native.h"  // javac -h: checks the signatures below
#endif

using namespace lethe_jni;  // NOLINT: the bridge's own helpers

namespace {


struct IteratorHolder {
  std::unique_ptr<lethe::Iterator> it;
  std::string scratch;
};

}  // namespace

extern "C" {

JNIEXPORT jbyteArray JNICALL Java_io_lethe_engine_internal_Native_get(JNIEnv* env, jclass, jlong db, jlong cf,
                                                                      jbyteArray key, jlong snapshot_seq,
                                                                      jboolean fill_cache, jlongArray delete_key_out,
                                                                      jboolean has_delete_key, jlong delete_key) {
  return Guarded<jbyteArray>(env, nullptr, [&]() -> jbyteArray {
    JBytes k(env, key);
    lethe::ReadOptions ro;
    ro.fill_cache = fill_cache != JNI_FALSE;
    ro.has_delete_key = has_delete_key != JNI_FALSE;
    ro.delete_key = static_cast<uint64_t>(delete_key);
    SequenceSnapshot snap(static_cast<uint64_t>(snapshot_seq));
    if (snapshot_seq >= 0) ro.snapshot = &snap;
    std::string value;
    uint64_t dk = 0;
    Status s = Db(db)->Get(ro, Cf(cf), k.view(), &value, &dk);
    if (s.IsNotFound()) return nullptr;
    if (!s.ok()) {
      ThrowStatus(env, s);
      return nullptr;
    }
    if (delete_key_out != nullptr) {
      jlong out = static_cast<jlong>(dk);
      env->SetLongArrayRegion(delete_key_out, 0, 1, &out);
    }
    return ToJava(env, value);
  });
}

// The native side of one MultiGetBatch call, kept per thread so that
// batches reuse their buffers.
struct MultiGetBuffers {
  std::string keys;
  std::vector<jint> key_ends, starts, lengths;
  std::vector<std::string_view> views;
  std::vector<std::string> values;
  std::vector<Status> statuses;
  std::vector<uint64_t> delete_keys;
  // Lets go of what one large batch grew, so that an idle thread keeps little.
  void Trim() {
    constexpr size_t kKeepBytes = 64 << 10, kKeepKeys = 1024;
    if (keys.capacity() > kKeepBytes) std::string().swap(keys);
    for (std::string& v : values) {
      if (v.capacity() > kKeepBytes) std::string().swap(v);
    }
    if (values.size() > kKeepKeys) *this = MultiGetBuffers();
  }
  void Resize(size_t n) {
    key_ends.resize(n);
    starts.resize(n);
    lengths.resize(n);
    views.resize(n);
    values.resize(n);
    statuses.resize(n);
    delete_keys.resize(n);
  }
};

// Reads the batch's packed keys: key i is keys[key_ends[i-1], key_ends[i]).
bool ReadMultiGetKeys(JNIEnv* env, jbyteArray keys, jintArray key_ends, jint n, MultiGetBuffers* b) {
  if (n < 0) return false;
  b->Resize(static_cast<size_t>(n));
  env->GetIntArrayRegion(key_ends, 0, n, b->key_ends.data());
  const jint total = n == 0 ? 0 : b->key_ends[static_cast<size_t>(n) - 1];
  if (env->ExceptionCheck() || total < 0 || total > env->GetArrayLength(keys)) return false;
  b->keys.resize(static_cast<size_t>(total));
  env->GetByteArrayRegion(keys, 0, total, reinterpret_cast<jbyte*>(b->keys.data()));
  jint begin = 0;
  for (size_t i = 0; i < static_cast<size_t>(n); i++) {
    const jint end = b->key_ends[i];
    if (end < begin) return false;
    b->views[i] = std::string_view(b->keys).substr(static_cast<size_t>(begin), static_cast<size_t>(end - begin));
    begin = end;
  }
  return !env->ExceptionCheck();
}

// Writes the found values into `values` (or a larger new array, returned)
// and their places into starts/lengths (-1: no value).
jbyteArray WriteMultiGetValues(JNIEnv* env, jbyteArray values, jintArray starts, jintArray lengths,
                               jlongArray delete_keys, jint n, MultiGetBuffers* b) {
  int64_t total = 0;
  for (size_t i = 0; i < static_cast<size_t>(n); i++) {
    b->starts[i] = static_cast<jint>(total);
    b->lengths[i] = b->statuses[i].ok() ? static_cast<jint>(b->values[i].size()) : -1;
    if (b->statuses[i].ok()) total += static_cast<int64_t>(b->values[i].size());
  }
  if (total > INT32_MAX - 8) {
    ThrowStatus(env, Status::InvalidArgument("multiGet: the values found exceed 2 GiB; use smaller batches"));
    return nullptr;
  }
  jbyteArray out = values;
  if (total > env->GetArrayLength(values)) {
    out = env->NewByteArray(static_cast<jsize>(std::max<int64_t>(total, 2 * int64_t{env->GetArrayLength(values)})));
    if (out == nullptr) return nullptr;
  }
  for (size_t i = 0; i < static_cast<size_t>(n); i++) {
    if (b->lengths[i] <= 0) continue;
    env->SetByteArrayRegion(out, b->starts[i], b->lengths[i], reinterpret_cast<const jbyte*>(b->values[i].data()));
  }
  env->SetIntArrayRegion(starts, 0, n, b->starts.data());
  env->SetIntArrayRegion(lengths, 0, n, b->lengths.data());
  if (delete_keys != nullptr) {
    env->SetLongArrayRegion(delete_keys, 0, n, reinterpret_cast<const jlong*>(b->delete_keys.data()));
  }
  return out;
}

JNIEXPORT jbyteArray JNICALL Java_io_lethe_engine_internal_Native_multiGet(
    JNIEnv* env, jclass, jlong db, jlong cf, jlong snapshot_seq, jboolean fill_cache, jbyteArray keys,
    jintArray key_ends, jint n, jbyteArray values, jintArray starts, jintArray lengths, jlongArray delete_keys) {
  return Guarded<jbyteArray>(env, nullptr, [&]() -> jbyteArray {
    thread_local MultiGetBuffers b;
    if (!ReadMultiGetKeys(env, keys, key_ends, n, &b)) {
      ThrowJava(env, "java/lang/IllegalArgumentException", "multiGet: malformed key batch");
      return nullptr;
    }
    lethe::ReadOptions ro;
    ro.fill_cache = fill_cache != JNI_FALSE;
    SequenceSnapshot snap(static_cast<uint64_t>(snapshot_seq));
    if (snapshot_seq >= 0) ro.snapshot = &snap;
    Db(db)->MultiGet(ro, Cf(cf), static_cast<size_t>(n), b.views.data(), b.values.data(), b.statuses.data(),
                     b.delete_keys.data());
    for (size_t i = 0; i < static_cast<size_t>(n); i++) {
      if (!b.statuses[i].ok() && !b.statuses[i].IsNotFound()) {
        ThrowStatus(env, b.statuses[i]);
        return nullptr;
      }
    }
    jbyteArray out = WriteMultiGetValues(env, values, starts, lengths, delete_keys, n, &b);
    b.Trim();
    return out;
  });
}

JNIEXPORT jlong JNICALL Java_io_lethe_engine_internal_Native_newIterator(JNIEnv* env, jclass, jlong db, jlong cf,
                                                                         jlong snapshot_seq, jbyteArray lower,
                                                                         jbyteArray upper, jboolean fill_cache) {
  return Guarded<jlong>(env, 0, [&]() -> jlong {
    lethe::ReadOptions ro;
    ro.fill_cache = fill_cache != JNI_FALSE;
    SequenceSnapshot snap(static_cast<uint64_t>(snapshot_seq));
    if (snapshot_seq >= 0) ro.snapshot = &snap;  // the iterator copies the sequence
    JBytes lo(env, lower), hi(env, upper);
    if (lo.valid()) {
      ro.lower_bound.assign(lo.view());
      ro.has_lower_bound = true;
    }
    if (hi.valid()) {
      ro.upper_bound.assign(hi.view());
      ro.has_upper_bound = true;
    }
    auto holder = std::make_unique<IteratorHolder>();
    holder->it = Db(db)->NewIterator(ro, Cf(cf));
    if (!holder->it->status().ok()) {
      ThrowStatus(env, holder->it->status());
      return 0;
    }
    g_live_objects++;
    return reinterpret_cast<jlong>(holder.release());
  });
}

JNIEXPORT jint JNICALL Java_io_lethe_engine_internal_Native_iteratorFill(JNIEnv* env, jclass, jlong handle, jint op,
                                                                         jbyteArray target, jbyteArray buffer,
                                                                         jint max_entries) {
  return Guarded<jint>(env, 0, [&]() -> jint {
    auto* h = reinterpret_cast<IteratorHolder*>(handle);
    lethe::Iterator* it = h->it.get();
    // op: 0 SeekToFirst, 1 Seek, 2 go on forwards, 3 SeekToLast, 4 SeekForPrev, 5 go on backwards.
    if (op == 0) {
      it->SeekToFirst();
    } else if (op == 1) {
      JBytes t(env, target);
      it->Seek(t.view());
    } else if (op == 3) {
      it->SeekToLast();
    } else if (op == 4) {
      JBytes t(env, target);
      it->SeekForPrev(t.view());
    }
    const bool backward = op >= 3;
    const size_t capacity = static_cast<size_t>(env->GetArrayLength(buffer));
    std::string& out = h->scratch;
    out.clear();
    jint n = 0;
    while (it->Valid() && n < max_entries) {
      std::string_view k = it->key(), v = it->value();
      size_t need = 16 + k.size() + v.size();
      if (out.size() + need > capacity) {
        if (n == 0) return -static_cast<jint>(std::min<size_t>(need, INT32_MAX));
        break;
      }
      char header[16];
      uint32_t kl = static_cast<uint32_t>(k.size()), vl = static_cast<uint32_t>(v.size());
      uint64_t dk = it->delete_key();
      std::memcpy(header, &kl, 4);
      std::memcpy(header + 4, &vl, 4);
      std::memcpy(header + 8, &dk, 8);
      out.append(header, 16);
      out.append(k.data(), k.size());
      out.append(v.data(), v.size());
      n++;
      backward ? it->Prev() : it->Next();
    }
    if (!it->status().ok()) {
      ThrowStatus(env, it->status());
      return 0;
    }
    env->SetByteArrayRegion(buffer, 0, static_cast<jsize>(out.size()), reinterpret_cast<const jbyte*>(out.data()));
    return (n << 1) | (it->Valid() ? 0 : 1);
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_closeIterator(JNIEnv* env, jclass, jlong handle) {
  Guarded<int>(env, 0, [&] {
    if (handle != 0) {
      delete reinterpret_cast<IteratorHolder*>(handle);
      g_live_objects--;
    }
    return 0;
  });
}

}  // extern "C"
