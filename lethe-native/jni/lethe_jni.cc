// The JNI bridge: io.lethe.engine.internal.Native. Thin by design: it
// copies arguments, calls the public C++ API (include/lethe) and turns a
// non-OK Status into io.lethe.engine.LetheException.
//
// Rules kept by every entry point:
//  * No C++ exception unwinds into the JVM: each body runs inside Guarded().
//  * Handles are pointers created here; the Java side guarantees they are
//    live (io.lethe.engine.internal.ResourceGuard) and frees each once.
//  * Snapshots cross as sequence numbers, never as pointers.
#include <jni.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "lethe/db.h"
#include "lethe/memory_budget.h"
#include "statistics_transfer.h"

#if __has_include("io_lethe_engine_internal_Native.h")
#include "io_lethe_engine_internal_Native.h"  // javac -h: checks the signatures below
#endif

namespace {

using lethe::Status;

jclass g_exception_class = nullptr;
jmethodID g_exception_ctor = nullptr;
std::atomic<int64_t> g_live_objects{0};

// Options layout version (io.lethe.engine.DbOptions.ENCODING_VERSION).
constexpr jlong kOptionsVersion = 7;
constexpr jsize kDbOptionLongs = 15;
constexpr jsize kCfOptionLongs = 15;

void ThrowStatus(JNIEnv* env, const Status& s) {
  if (env->ExceptionCheck()) return;  // keep the first exception
  jstring msg = env->NewStringUTF(s.message().c_str());
  if (msg == nullptr) return;  // OutOfMemoryError pending
  auto ex = static_cast<jthrowable>(
      env->NewObject(g_exception_class, g_exception_ctor, static_cast<jint>(s.code()), msg));
  if (ex != nullptr) env->Throw(ex);
}

void ThrowJava(JNIEnv* env, const char* cls, const char* msg) {
  if (env->ExceptionCheck()) return;
  jclass c = env->FindClass(cls);
  if (c != nullptr) env->ThrowNew(c, msg);
}

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

std::string JString(JNIEnv* env, jstring s) {
  if (s == nullptr) return {};
  const char* chars = env->GetStringUTFChars(s, nullptr);
  if (chars == nullptr) return {};
  std::string r(chars);
  env->ReleaseStringUTFChars(s, chars);
  return r;
}

jbyteArray ToJava(JNIEnv* env, std::string_view bytes) {
  jbyteArray r = env->NewByteArray(static_cast<jsize>(bytes.size()));
  if (r == nullptr) return nullptr;
  env->SetByteArrayRegion(r, 0, static_cast<jsize>(bytes.size()), reinterpret_cast<const jbyte*>(bytes.data()));
  return r;
}

lethe::DB* Db(jlong h) { return reinterpret_cast<lethe::DB*>(h); }
lethe::ColumnFamilyHandle* Cf(jlong h) { return reinterpret_cast<lethe::ColumnFamilyHandle*>(h); }

lethe::WriteOptions WriteFlags(jint flags) {
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

void DecodeCfOptions(const jlong* v, lethe::ColumnFamilyOptions* o) {
  o->size_ratio = static_cast<int>(v[0]);
  o->page_size = static_cast<size_t>(v[1]);
  o->pages_per_tile = static_cast<int>(v[2]);
  o->bloom_bits_per_key = static_cast<int>(v[3]);
  o->target_file_size = static_cast<size_t>(v[4]);
  o->level1_bytes = static_cast<uint64_t>(v[5]);
  o->level0_compaction_trigger = static_cast<int>(v[6]);
  o->level0_stop_writes_trigger = static_cast<int>(v[7]);
  o->delete_persistence_threshold_us = static_cast<uint64_t>(v[8]);
  o->fade_file_pick = static_cast<lethe::FadeFilePick>(v[9]);
  // An out-of-range value becomes a codec no build knows: DB::Open rejects it.
  auto codec = [](jlong x) { return static_cast<lethe::Compression>(x >= 0 && x <= 2 ? x : 0xff); };
  o->compression = codec(v[10]);
  if (v[11] >= 0) o->bottommost_compression = codec(v[11]);
  o->dynamic_level_bytes = v[12] != 0;
  // Out of range: a style no build knows, which DB::Open rejects.
  o->compaction_style = static_cast<lethe::CompactionStyle>(v[13] == 0 || v[13] == 1 ? v[13] : 0xff);
  o->time_ordered_max_files = static_cast<int>(std::clamp<jlong>(v[14], 0, INT32_MAX));
}

struct IteratorHolder {
  std::unique_ptr<lethe::Iterator> it;
  std::string scratch;
};

}  // namespace

extern "C" {

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  jclass local = env->FindClass("io/lethe/engine/LetheException");
  if (local == nullptr) return JNI_ERR;
  g_exception_class = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  g_exception_ctor = env->GetMethodID(g_exception_class, "<init>", "(ILjava/lang/String;)V");
  if (g_exception_ctor == nullptr) return JNI_ERR;
  return JNI_VERSION_1_8;
}

JNIEXPORT jlong JNICALL Java_io_lethe_engine_internal_Native_open(JNIEnv* env, jclass, jstring path,
                                                                  jlongArray options) {
  return Guarded<jlong>(env, 0, [&]() -> jlong {
    if (path == nullptr || options == nullptr ||
        env->GetArrayLength(options) != kDbOptionLongs + kCfOptionLongs) {
      ThrowStatus(env, Status::InvalidArgument("malformed open arguments"));
      return 0;
    }
    jlong v[kDbOptionLongs + kCfOptionLongs];
    env->GetLongArrayRegion(options, 0, kDbOptionLongs + kCfOptionLongs, v);
    if (v[0] != kOptionsVersion) {
      ThrowStatus(env, Status::InvalidArgument("options encoded by an incompatible Java API version"));
      return 0;
    }
    lethe::Options o;
    o.create_if_missing = v[1] != 0;
    o.error_if_exists = v[2] != 0;
    o.write_buffer_size = static_cast<size_t>(v[3]);
    o.page_cache_bytes = static_cast<size_t>(v[4]);
    o.max_open_files = static_cast<int>(v[5]);
    o.use_wal = v[6] != 0;
    o.wal_checksums = v[7] != 0;
    o.verify_checksums = v[8] != 0;
    o.background_compactions = v[9] != 0;
    o.avoid_blind_deletes = v[10] != 0;
    o.multi_get_threads = static_cast<int>(v[11]);
    o.heap_trim_interval_us = static_cast<uint64_t>(v[13]);
    o.compact_in_memory = v[14] != 0;
    if (v[12] != 0) o.memory_budget = *reinterpret_cast<std::shared_ptr<lethe::MemoryBudget>*>(v[12]);
    DecodeCfOptions(v + kDbOptionLongs, &o.cf_defaults);
    std::unique_ptr<lethe::DB> db;
    Status s = lethe::DB::Open(o, JString(env, path), &db);
    if (!s.ok()) {
      ThrowStatus(env, s);
      return 0;
    }
    g_live_objects++;
    return reinterpret_cast<jlong>(db.release());
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_closeDb(JNIEnv* env, jclass, jlong db) {
  Guarded<int>(env, 0, [&] {
    if (db != 0) {
      delete Db(db);
      g_live_objects--;
    }
    return 0;
  });
}

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

JNIEXPORT jlong JNICALL Java_io_lethe_engine_internal_Native_defaultColumnFamily(JNIEnv* env, jclass, jlong db) {
  return Guarded<jlong>(env, 0, [&] { return reinterpret_cast<jlong>(Db(db)->DefaultColumnFamily()); });
}

JNIEXPORT jlong JNICALL Java_io_lethe_engine_internal_Native_createColumnFamily(JNIEnv* env, jclass, jlong db,
                                                                                jstring name, jlongArray options) {
  return Guarded<jlong>(env, 0, [&]() -> jlong {
    if (options == nullptr || env->GetArrayLength(options) != kCfOptionLongs) {
      ThrowStatus(env, Status::InvalidArgument("malformed column family options"));
      return 0;
    }
    jlong v[kCfOptionLongs];
    env->GetLongArrayRegion(options, 0, kCfOptionLongs, v);
    lethe::ColumnFamilyOptions o;
    DecodeCfOptions(v, &o);
    lethe::ColumnFamilyHandle* h = nullptr;
    Status s = Db(db)->CreateColumnFamily(JString(env, name), o, &h);
    if (!s.ok()) {
      ThrowStatus(env, s);
      return 0;
    }
    return reinterpret_cast<jlong>(h);
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_dropColumnFamily(JNIEnv* env, jclass, jlong db, jlong cf) {
  Guarded<int>(env, 0, [&] {
    Status s = Db(db)->DropColumnFamily(Cf(cf));
    if (!s.ok()) ThrowStatus(env, s);
    return 0;
  });
}

JNIEXPORT jlongArray JNICALL Java_io_lethe_engine_internal_Native_listColumnFamilies(JNIEnv* env, jclass, jlong db) {
  return Guarded<jlongArray>(env, nullptr, [&]() -> jlongArray {
    std::vector<lethe::ColumnFamilyHandle*> cfs = Db(db)->ListColumnFamilies();
    std::vector<jlong> v;
    for (auto* h : cfs) v.push_back(reinterpret_cast<jlong>(h));
    jlongArray r = env->NewLongArray(static_cast<jsize>(v.size()));
    if (r != nullptr) env->SetLongArrayRegion(r, 0, static_cast<jsize>(v.size()), v.data());
    return r;
  });
}

JNIEXPORT jint JNICALL Java_io_lethe_engine_internal_Native_columnFamilyId(JNIEnv* env, jclass, jlong cf) {
  return Guarded<jint>(env, 0, [&] { return static_cast<jint>(Cf(cf)->id()); });
}

JNIEXPORT jstring JNICALL Java_io_lethe_engine_internal_Native_columnFamilyName(JNIEnv* env, jclass, jlong cf) {
  return Guarded<jstring>(env, nullptr, [&] { return env->NewStringUTF(Cf(cf)->name().c_str()); });
}

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

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_put(JNIEnv* env, jclass, jlong db, jlong cf, jbyteArray key,
                                                                jbyteArray value, jlong delete_key, jint flags) {
  Guarded<int>(env, 0, [&] {
    JBytes k(env, key), v(env, value);
    Status s = Db(db)->Put(WriteFlags(flags), Cf(cf), k.view(), v.view(), static_cast<uint64_t>(delete_key));
    if (!s.ok()) ThrowStatus(env, s);
    return 0;
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_delete(JNIEnv* env, jclass, jlong db, jlong cf,
                                                                   jbyteArray key, jint flags) {
  Guarded<int>(env, 0, [&] {
    JBytes k(env, key);
    Status s = Db(db)->Delete(WriteFlags(flags), Cf(cf), k.view());
    if (!s.ok()) ThrowStatus(env, s);
    return 0;
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_deleteRange(JNIEnv* env, jclass, jlong db, jlong cf,
                                                                        jbyteArray begin, jbyteArray end, jint flags) {
  Guarded<int>(env, 0, [&] {
    JBytes b(env, begin), e(env, end);
    Status s = Db(db)->DeleteRange(WriteFlags(flags), Cf(cf), b.view(), e.view());
    if (!s.ok()) ThrowStatus(env, s);
    return 0;
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_merge(JNIEnv* env, jclass, jlong db, jlong cf,
                                                                  jbyteArray key, jbyteArray operand, jlong delete_key,
                                                                  jint flags) {
  Guarded<int>(env, 0, [&] {
    JBytes k(env, key), v(env, operand);
    Status s = Db(db)->Merge(WriteFlags(flags), Cf(cf), k.view(), v.view(), static_cast<uint64_t>(delete_key));
    if (!s.ok()) ThrowStatus(env, s);
    return 0;
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_deleteByDeleteKey(JNIEnv* env, jclass, jlong db,
                                                                              jlong cf, jlong lo, jlong hi) {
  Guarded<int>(env, 0, [&] {
    Status s = Db(db)->DeleteByDeleteKey(Cf(cf), static_cast<uint64_t>(lo), static_cast<uint64_t>(hi));
    if (!s.ok()) ThrowStatus(env, s);
    return 0;
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_advanceHorizon(JNIEnv* env, jclass, jlong db, jlong cf,
                                                                           jlong horizon) {
  Guarded<int>(env, 0, [&] {
    Status s = Db(db)->AdvanceHorizon(Cf(cf), static_cast<uint64_t>(horizon));
    if (!s.ok()) ThrowStatus(env, s);
    return 0;
  });
}

JNIEXPORT jlong JNICALL Java_io_lethe_engine_internal_Native_horizon(JNIEnv* env, jclass, jlong db, jlong cf) {
  return Guarded<jlong>(env, 0, [&]() -> jlong {
    uint64_t h = 0;
    Status s = Db(db)->GetHorizon(Cf(cf), &h);
    if (!s.ok()) ThrowStatus(env, s);
    return static_cast<jlong>(h);
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_write(JNIEnv* env, jclass, jlong db, jbyteArray batch,
                                                                  jint length, jint flags) {
  Guarded<int>(env, 0, [&] {
    if (batch == nullptr || length < 0 || length > env->GetArrayLength(batch)) {
      ThrowStatus(env, Status::InvalidArgument("malformed write batch arguments"));
      return 0;
    }
    lethe::WriteBatch b;
    std::string data(static_cast<size_t>(length), '\0');
    env->GetByteArrayRegion(batch, 0, length, reinterpret_cast<jbyte*>(data.data()));
    Status s = b.SetData(data);
    if (s.ok()) s = Db(db)->Write(WriteFlags(flags), b);
    if (!s.ok()) ThrowStatus(env, s);
    return 0;
  });
}

JNIEXPORT jlong JNICALL Java_io_lethe_engine_internal_Native_getSnapshot(JNIEnv* env, jclass, jlong db) {
  return Guarded<jlong>(env, 0, [&] {
    g_live_objects++;
    return reinterpret_cast<jlong>(Db(db)->GetSnapshot());
  });
}

JNIEXPORT jlong JNICALL Java_io_lethe_engine_internal_Native_snapshotSequence(JNIEnv* env, jclass, jlong snapshot) {
  return Guarded<jlong>(env, 0, [&] {
    return static_cast<jlong>(reinterpret_cast<const lethe::Snapshot*>(snapshot)->sequence());
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_releaseSnapshot(JNIEnv* env, jclass, jlong db,
                                                                            jlong snapshot) {
  Guarded<int>(env, 0, [&] {
    if (snapshot != 0) {
      Db(db)->ReleaseSnapshot(reinterpret_cast<const lethe::Snapshot*>(snapshot));
      g_live_objects--;
    }
    return 0;
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

#define LETHE_DB_CALL(name, call)                                                      \
  JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_##name(JNIEnv* env, jclass, jlong db) { \
    Guarded<int>(env, 0, [&] {                                                         \
      Status s = Db(db)->call();                                                       \
      if (!s.ok()) ThrowStatus(env, s);                                                \
      return 0;                                                                        \
    });                                                                                \
  }
LETHE_DB_CALL(flush, Flush)
LETHE_DB_CALL(syncWal, SyncWal)
LETHE_DB_CALL(compactAll, CompactAll)
LETHE_DB_CALL(waitForBackgroundWork, WaitForBackgroundWork)
#undef LETHE_DB_CALL

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_checkpoint(JNIEnv* env, jclass, jlong db, jstring dir) {
  Guarded<int>(env, 0, [&] {
    Status s = Db(db)->Checkpoint(JString(env, dir));
    if (!s.ok()) ThrowStatus(env, s);
    return 0;
  });
}

JNIEXPORT jlong JNICALL Java_io_lethe_engine_internal_Native_beginCheckpoint(JNIEnv* env, jclass, jlong db,
                                                                            jstring dir, jboolean sync,
                                                                            jboolean flush_first) {
  return Guarded<jlong>(env, 0, [&]() -> jlong {
    std::unique_ptr<lethe::PendingCheckpoint> checkpoint;
    lethe::CheckpointOptions options;
    options.sync = sync != JNI_FALSE;
    options.flush_first = flush_first != JNI_FALSE;
    Status s = Db(db)->BeginCheckpoint(JString(env, dir), options, &checkpoint);
    if (!s.ok()) {
      ThrowStatus(env, s);
      return 0;
    }
    g_live_objects++;
    return reinterpret_cast<jlong>(checkpoint.release());
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_finishCheckpoint(JNIEnv* env, jclass, jlong checkpoint) {
  Guarded<int>(env, 0, [&] {
    Status s = reinterpret_cast<lethe::PendingCheckpoint*>(checkpoint)->Finish();
    if (!s.ok()) ThrowStatus(env, s);
    return 0;
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_releaseCheckpoint(JNIEnv* env, jclass, jlong checkpoint) {
  Guarded<int>(env, 0, [&] {
    if (checkpoint != 0) {
      delete reinterpret_cast<lethe::PendingCheckpoint*>(checkpoint);
      g_live_objects--;
    }
    return 0;
  });
}

JNIEXPORT jobjectArray JNICALL Java_io_lethe_engine_internal_Native_liveFiles(JNIEnv* env, jclass, jlong db,
                                                                              jboolean flush) {
  return Guarded<jobjectArray>(env, nullptr, [&]() -> jobjectArray {
    std::vector<lethe::LiveFile> files;
    Status s = Db(db)->GetLiveFiles(flush != JNI_FALSE, &files);
    if (!s.ok()) {
      ThrowStatus(env, s);
      return nullptr;
    }
    jclass string_class = env->FindClass("java/lang/String");
    if (string_class == nullptr) return nullptr;
    jobjectArray r = env->NewObjectArray(static_cast<jsize>(files.size() * 3), string_class, nullptr);
    if (r == nullptr) return nullptr;
    for (size_t i = 0; i < files.size(); i++) {
      std::string fields[3] = {files[i].name, std::to_string(files[i].size_bytes), files[i].immutable ? "1" : "0"};
      for (int f = 0; f < 3; f++) {
        jstring js = env->NewStringUTF(fields[f].c_str());
        if (js == nullptr) return nullptr;
        env->SetObjectArrayElement(r, static_cast<jsize>(i * 3 + f), js);
        env->DeleteLocalRef(js);
      }
    }
    return r;
  });
}

// Layout: statistics_transfer.h.
JNIEXPORT jlongArray JNICALL Java_io_lethe_engine_internal_Native_statistics(JNIEnv* env, jclass, jlong db) {
  return Guarded<jlongArray>(env, nullptr, [&]() -> jlongArray {
    const std::vector<int64_t> v = lethe_jni::EncodeStatistics(Db(db)->GetStatistics());
    jlongArray r = env->NewLongArray(static_cast<jsize>(v.size()));
    static_assert(sizeof(jlong) == sizeof(int64_t));
    if (r != nullptr) env->SetLongArrayRegion(r, 0, static_cast<jsize>(v.size()), reinterpret_cast<const jlong*>(v.data()));
    return r;
  });
}

JNIEXPORT jstring JNICALL Java_io_lethe_engine_internal_Native_property(JNIEnv* env, jclass, jlong db, jlong cf,
                                                                        jstring name) {
  return Guarded<jstring>(env, nullptr, [&]() -> jstring {
    std::string value;
    if (!Db(db)->GetProperty(Cf(cf), JString(env, name), &value)) return nullptr;
    return env->NewStringUTF(value.c_str());
  });
}

JNIEXPORT void JNICALL Java_io_lethe_engine_internal_Native_raiseStatus(JNIEnv* env, jclass, jint code,
                                                                        jstring message) {
  Guarded<int>(env, 0, [&] {
    std::string msg = JString(env, message);
    switch (static_cast<Status::Code>(code)) {
      case Status::Code::kOk: break;
      case Status::Code::kNotFound: ThrowStatus(env, Status::NotFound(msg)); break;
      case Status::Code::kCorruption: ThrowStatus(env, Status::Corruption(msg)); break;
      case Status::Code::kNotSupported: ThrowStatus(env, Status::NotSupported(msg)); break;
      case Status::Code::kInvalidArgument: ThrowStatus(env, Status::InvalidArgument(msg)); break;
      case Status::Code::kIOError: ThrowStatus(env, Status::IOError(msg)); break;
      case Status::Code::kBusy: ThrowStatus(env, Status::Busy(msg)); break;
      case Status::Code::kAborted: ThrowStatus(env, Status::Aborted(msg)); break;
      case Status::Code::kNoSpace: ThrowStatus(env, Status::NoSpace(msg)); break;
      default: throw std::runtime_error("unknown status code " + std::to_string(code));
    }
    return 0;
  });
}

JNIEXPORT jlong JNICALL Java_io_lethe_engine_internal_Native_liveObjects(JNIEnv*, jclass) {
  return static_cast<jlong>(g_live_objects.load());
}

}  // extern "C"
