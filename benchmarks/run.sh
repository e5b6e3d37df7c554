#!/usr/bin/env bash
# The benchmark suite, one command:
#   benchmarks/run.sh quick    # a few minutes: every benchmark on small data -> target/bench-quick/report.md
#   benchmarks/run.sh full     # about half an hour: docs/benchmarks.md, CSV files and charts in docs/benchmarks/
# Options: --out DIR, --report FILE, --only engine,ycsb,secondary,jobs. Needs a built tree
# (scripts/setup.sh, then mvn -B install -DskipTests). Run it on an otherwise idle machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
suite="$root/benchmarks/suite/target"
if [ ! -f "$suite/classpath.txt" ]; then
  echo "benchmarks/suite is not built: run mvn -B install -DskipTests first" >&2
  exit 1
fi
exec java -Dlethe.root="$root" -cp "$suite/classes:$(cat "$suite/classpath.txt")" io.lethe.bench.suite.Suite "$@"
