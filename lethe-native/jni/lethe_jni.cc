// The JNI bridge: io.lethe.engine.internal.Native. Thin by design: it
// copies arguments, calls the public C++ API (include/lethe) and turns a
// non-OK Status into io.lethe.engine.LetheException. This file: loading,
// databases, column families, writes, snapshots, flushes, checkpoints and
// statistics; reads are in read_jni.cc, memory budgets in memory_jni.cc, the
// shared helpers in jni_support.h.
//
// Rules kept by every entry point:
//  * No C++ exception unwinds into the JVM: each body runs inside Guarded().
//  * Handles are pointers created here; the Java side guarantees they are
//    live (io.lethe.engine.internal.ResourceGuard) and frees each once.
//  * Snapshots cross as sequence numbers, never as pointers.
#include <jni.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "jni_support.h"
#include "lethe/db.h"
#include "lethe/memory_budget.h"
#include "statistics_transfer.h"

#if __has_include("io_lethe_engine_internal_Native.h")
#include "io_lethe_engine_internal_Native.h"  // javac -h: checks the signatures below
#endif

using namespace lethe_jni;  // NOLINT: the bridge's own helpers

namespace {

// Options layout version (io.lethe.engine.DbOptions.ENCODING_VERSION).
constexpr jlong kOptionsVersion = 8;
constexpr jsize kDbOptionLongs = 15;
constexpr jsize kCfOptionLongs = 16;

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
  if (v[15] >= 0) o->flush_compression = codec(v[15]);
}

}  // namespace

extern "C" {

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  return InitExceptions(env) ? JNI_VERSION_1_8 : JNI_ERR;
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

JNIEXPORT jint JNICALL Java_io_lethe_engine_internal_Native_checkpointImages(JNIEnv* env, jclass, jlong checkpoint) {
  return Guarded<jint>(env, 0, [&] {
    return static_cast<jint>(reinterpret_cast<lethe::PendingCheckpoint*>(checkpoint)->ImageCount());
  });
}

JNIEXPORT jobjectArray JNICALL Java_io_lethe_engine_internal_Native_writeCheckpointImage(JNIEnv* env, jclass,
                                                                                       jlong checkpoint, jint image) {
  return Guarded<jobjectArray>(env, nullptr, [&]() -> jobjectArray {
    std::vector<std::string> files;
    Status s = image < 0 ? Status::InvalidArgument("no such checkpoint image")
                         : reinterpret_cast<lethe::PendingCheckpoint*>(checkpoint)->WriteImage(
                               static_cast<size_t>(image), &files);
    if (!s.ok()) {
      ThrowStatus(env, s);
      return nullptr;
    }
    return ToJava(env, files);
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
    std::vector<std::string> fields;
    for (const lethe::LiveFile& f : files) {
      fields.insert(fields.end(), {f.name, std::to_string(f.size_bytes), f.immutable ? "1" : "0"});
    }
    return ToJava(env, fields);
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
