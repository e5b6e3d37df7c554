#!/usr/bin/env bash
# The main job, for now: the native engine benchmark on a small default
# workload (the windowed Flink example takes its place with the examples issue).
# Extra arguments go to lethe_bench (e.g. --num=1000000).
set -euo pipefail
cd "$(dirname "$0")/.."
bench=lethe-native/target/cmake/lethe_bench
if [ ! -x "$bench" ]; then
  echo "run-main: $bench is missing: build first with 'mvn -B install -DskipTests'" >&2
  exit 1
fi
exec "$bench" --benchmarks=fillrandom,readrandom,readmissing,overwrite,deleterandom,seekrandom --num=200000 "$@"
