#!/usr/bin/env bash
# The benchmark suite, one command:
#   benchmarks/run.sh quick    # a few minutes: every benchmark on small data -> target/bench-quick/report.md
#   benchmarks/run.sh full     # about 9.3 hours: docs/benchmarks.md, CSV files and charts in docs/benchmarks/
#   benchmarks/run.sh report DIR [FILE]   # only the report, from the CSV files in DIR (FILE: DIR/report.md)
# Options: --out DIR, --report FILE, --only engine,ycsb,secondary,jobs,largestate,nexmark,nexmark-async,streams. Needs a built tree
# (scripts/setup.sh, then mvn -B install -DskipTests). Run it on an otherwise idle machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
suite="$root/benchmarks/suite/target"
if [ ! -f "$suite/classpath.txt" ]; then
  echo "benchmarks/suite is not built: run mvn -B install -DskipTests first" >&2
  exit 1
fi
cp="$suite/classes:$(cat "$suite/classpath.txt")"
if [ "${1:-}" = report ]; then
  [ $# -ge 2 ] || { echo "usage: benchmarks/run.sh report DIR [FILE]" >&2; exit 2; }
  exec java -cp "$cp" io.lethe.bench.suite.Report "$2" "${3:-$2/report.md}"
fi
exec java -Dlethe.root="$root" -cp "$cp" io.lethe.bench.suite.Suite "$@"
