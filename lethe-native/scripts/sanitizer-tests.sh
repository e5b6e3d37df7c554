#!/usr/bin/env bash
# Builds the native tests with AddressSanitizer + UndefinedBehaviorSanitizer
# and with ThreadSanitizer, and runs them (including the model-based test and,
# under ASan, a shorter crash torture run).
# Called by Maven in the verify phase of lethe-native; also usable by hand:
#   lethe-native/scripts/sanitizer-tests.sh [build-root]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="${1:-$here/target}"
for kind in address thread; do
  dir="$root/cmake-$kind"
  echo "== native tests under ${kind} sanitizer (build in $dir)"
  # The crash torture runs under ASan (fewer kills: recovery's memory use is
  # what it checks there); TSan skips it (its forked children are killed
  # while its runtime may hold locks). The model test runs two seeds per
  # option set under ASan and one under TSan (the plain build runs all four).
  # TSan leaves out tests that start no thread the others do not (corruption,
  # level shape, the WAL's log format), FADE's negative controls (the same
  # compactions without FADE) and FADE's runs on dynamic level targets (the
  # same threads as on static ones): they took over half of its time.
  # ASan+UBSan builds with clang, which compiles it in half GCC's time (the
  # largest test file 11 against 22 s); TSan with the default compiler, so
  # the tests build with both.
  case "$kind" in
    address) targets=(lethe_tests lethe_crash_test); extra=(-DLETHE_CRASH_KILLS=60 -DCMAKE_CXX_COMPILER=clang++-14)
             skip=(-E '_seed[34] ') ;;
    thread) targets=(lethe_tests); extra=()
            skip=(-LE crash -E '_seed[234] |LevelShapeTest|CorruptionTest|LogTest\.|WithoutFade|_dynamic_levels ') ;;
  esac
  # Debug keeps assertions; -O1 (the level both sanitizers' documentation recommends): on two
  # cores the ASan tests took 97 s against 267 s at -O0. -g1 keeps the line tables the reports'
  # stack traces need and built in 190 s against 235 s with full debug information (GCC's ASan,
  # two cores, before the test headers were precompiled).
  cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-g1 -O1" -DLETHE_BUILD_JNI=OFF \
    -DLETHE_SANITIZE="$kind" "${extra[@]}" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" --parallel 2 --target "${targets[@]}"
  case "$kind" in
    address) export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ;;
    thread) export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ;;
  esac
  ctest --test-dir "$dir" --output-on-failure --parallel 2 "${skip[@]}"
done
