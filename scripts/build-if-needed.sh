#!/usr/bin/env bash
# Makes sure the local runs (scripts/run-main.sh, scripts/run-example.sh) have a current build:
# on a fresh machine it installs the toolchain (scripts/setup.sh) and builds the engine, the
# backend and the examples; later it rebuilds only when a source changed since the last build.
# Progress goes to the console, Maven's whole output to target/build.log.
set -euo pipefail
cd "$(dirname "$0")/.."

marker=examples/target/classpath.txt
reason=""
if [ ! -f "$marker" ] || [ ! -d examples/target/classes ]; then
  reason="no build yet"
elif [ -n "$(find pom.xml lethe-native lethe-statebackend examples -name target -prune -o -type f -newer "$marker" -print -quit)" ]; then
  reason="sources changed since the last build"
fi
[ -z "$reason" ] && exit 0

echo "[build] $reason: setting up and building (about 2 minutes on 2 cores once the toolchain and the Maven dependencies are here)"
scripts/setup.sh 2>&1 | sed -u 's/^/[setup] /'
mkdir -p target
start=$SECONDS
# Module starts, the native build's steps and every 100th download, as they happen.
set +e
mvn -B install -DskipTests -pl examples -am 2>&1 | tee target/build.log | awk '
  /^\[INFO\] Building / { print "[build] " substr($0, 8); fflush(); next }
  /^\[[0-9]+\/[0-9]+\] / { if (++steps % 10 == 0) { print "[build]   native " $1; fflush() } next }
  /^Downloaded from / { if (++downloads % 100 == 0) { print "[build]   " downloads " artifacts downloaded"; fflush() } next }
  /BUILD (SUCCESS|FAILURE)|^\[ERROR\]/ { print "[build] " $0; fflush() }'
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "[build] failed: see target/build.log" >&2
  exit "$status"
fi
echo "[build] done in $((SECONDS - start)) s"
