// The JNI bridge (io.lethe.engine). This file only anchors the library for
// now: the Java API and its native methods arrive with the JNI issue.
#include <jni.h>

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM*, void*) { return JNI_VERSION_1_8; }
