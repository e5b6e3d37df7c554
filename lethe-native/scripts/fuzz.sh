#!/usr/bin/env bash
# Builds the libFuzzer targets (lethe-native/fuzz/) with clang++-14 under
# AddressSanitizer + UndefinedBehaviorSanitizer and runs each for a bounded
# time. Fails if any target crashes, hangs (10 s per input), runs out of
# memory or trips a sanitizer; the input is kept in
# target/fuzz/<name>/artifacts.
# Called by Maven in the verify phase of lethe-native (30 s a target; skip
# with -Dlethe.fuzz.skip); longer by hand, e.g. an hour a target:
#   lethe-native/scripts/fuzz.sh 3600 [build-root]
# Each run starts from the working corpus of earlier runs
# (target/fuzz/<target>/corpus, where new inputs go), the committed seeds in
# fuzz/corpus/<target> if any, and seeds the target generates
# (`<target> --write_seeds=DIR`). LETHE_FUZZ_JOBS sets the build's
# parallelism (default 2).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-30}"
root="${2:-$here/target}"
dir="$root/cmake-fuzz"
targets=(wal_reader_fuzzer table_reader_fuzzer manifest_fuzzer)

command -v clang++-14 >/dev/null 2>&1 || { echo "fuzz: clang++-14 not found (scripts/setup.sh installs it)"; exit 1; }
start=$(date +%s)
echo "== fuzz targets (build in $dir)"
cmake -S "$here" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DLETHE_FUZZ=ON -DLETHE_BUILD_JNI=OFF -DLETHE_BUILD_TESTS=OFF > "$dir.configure.log" 2>&1 \
  || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" --parallel "${LETHE_FUZZ_JOBS:-2}" --target "${targets[@]}"
echo "fuzz: built in $(( $(date +%s) - start )) s"

export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
failed=()
summary=()
for t in "${targets[@]}"; do
  name="${t%_fuzzer}"
  work="$root/fuzz/$name"
  rm -rf "$work/generated"
  mkdir -p "$work/corpus" "$work/artifacts"
  "$dir/fuzz/$t" --write_seeds="$work/generated" > /dev/null
  inputs=("$work/corpus" "$work/generated")
  [ -d "$here/fuzz/corpus/$name" ] && inputs+=("$here/fuzz/corpus/$name")
  # One allocation over 512 MiB counts as a failure too (libFuzzer's default
  # is the RSS limit): no input of a few KiB should need that much.
  flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512
         -print_final_stats=1 -artifact_prefix="$work/artifacts/")
  [ -f "$here/fuzz/$t.dict" ] && flags+=(-dict="$here/fuzz/$t.dict")
  echo "== $t for $seconds s (log: $work/run.log)"
  rc=0
  "$dir/fuzz/$t" "${flags[@]}" "${inputs[@]}" > "$work/run.log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/run.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/run.log")
  line="$t: ${runs:-?} executions, ${rate:-?} exec/s"
  if [ "$rc" -ne 0 ]; then
    line="$line: FAILED (exit $rc)"
    failed+=("$t")
    grep -E "ERROR|SUMMARY|fuzz check failed|runtime error|Test unit written" "$work/run.log" | head -20 || true
  fi
  echo "$line"
  summary+=("$line")
done

echo "== fuzz summary ($(( $(date +%s) - start )) s in all)"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${failed[*]} failed; reproduce with: $dir/fuzz/<target> <input from target/fuzz/<name>/artifacts>"
  exit 1
fi
