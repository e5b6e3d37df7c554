#!/usr/bin/env bash
# Builds the native tests with AddressSanitizer + UndefinedBehaviorSanitizer
# and with ThreadSanitizer, and runs them (including the model-based test).
# Called by Maven in the verify phase of lethe-native; also usable by hand:
#   lethe-native/scripts/sanitizer-tests.sh [build-root]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="${1:-$here/target}"
for kind in address thread; do
  dir="$root/cmake-$kind"
  echo "== native tests under ${kind} sanitizer (build in $dir)"
  cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLETHE_BUILD_JNI=OFF \
    -DLETHE_SANITIZE="$kind" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" --parallel 2 --target lethe_tests
  case "$kind" in
    address) export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ;;
    thread) export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ;;
  esac
  ctest --test-dir "$dir" --output-on-failure --parallel 2
done
