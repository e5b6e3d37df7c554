#include "jni_support.h"

namespace lethe_jni {

std::atomic<int64_t> g_live_objects{0};

namespace {
jclass g_exception_class = nullptr;
jmethodID g_exception_ctor = nullptr;
}  // namespace

bool InitExceptions(JNIEnv* env) {
  jclass local = env->FindClass("io/lethe/engine/LetheException");
  if (local == nullptr) return false;
  g_exception_class = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  g_exception_ctor = env->GetMethodID(g_exception_class, "<init>", "(ILjava/lang/String;)V");
  return g_exception_ctor != nullptr;
}

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

jobjectArray ToJava(JNIEnv* env, const std::vector<std::string>& strings) {
  jclass string_class = env->FindClass("java/lang/String");
  if (string_class == nullptr) return nullptr;
  jobjectArray r = env->NewObjectArray(static_cast<jsize>(strings.size()), string_class, nullptr);
  if (r == nullptr) return nullptr;
  for (size_t i = 0; i < strings.size(); i++) {
    jstring js = env->NewStringUTF(strings[i].c_str());
    if (js == nullptr) return nullptr;
    env->SetObjectArrayElement(r, static_cast<jsize>(i), js);
    env->DeleteLocalRef(js);
  }
  return r;
}

}  // namespace lethe_jni
