#!/usr/bin/env bash
# Runs the expiry job benchmark (windows and TTL on Lethe, Flink's RocksDB and HashMap backends).
#   benchmarks/jobs/run.sh [quick|full] [output directory]
# Needs `mvn -B install -DskipTests` once (or a built tree). Writes a table to stdout and CSV files
# plus a PNG chart of local state size over time to the output directory (default: target/jobs).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
mvn -B -q -o compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt >/dev/null
exec java -Xmx2g ${JAVA_OPTS:-} -cp "target/classes:$(cat target/classpath.txt)" io.lethe.bench.jobs.ExpiryJobBench "$@"
