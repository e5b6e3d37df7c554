#!/usr/bin/env bash
# Runs an example job of examples/ locally (a MiniCluster in one JVM, a generated stream), after
# setting up and building what is missing (scripts/build-if-needed.sh).
#   scripts/run-example.sh ClickWindows [--seconds 45 --rate 100000 --backend lethe|hashmap ...]
#   scripts/run-example.sh TtlDedup [--ttl 5s --duplicate-percent 10 ...]
#   scripts/run-example.sh PageViewStreams [--clicks 2000000 --stores lethe|rocksdb ...] (Kafka Streams)
# Flink's log goes to target/example.log (warnings and errors also to the console).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ]; then
  echo "usage: $0 ClickWindows|TtlDedup|ClickProducer|PageViewStreams [options]" >&2
  exit 2
fi
job=$1
shift
scripts/build-if-needed.sh
classpath_file=examples/target/classpath.txt
mkdir -p target
# Flink's Kryo fallback on JDK types needs these (as in Flink's config.yaml, env.java.opts.all).
opens="--add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED
--add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
--add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
--add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
--add-opens=java.base/java.util.concurrent=ALL-UNNAMED
--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED"
# shellcheck disable=SC2086
exec java ${JAVA_OPTS:-} $opens \
  -Dlog4j.configurationFile=examples/conf/log4j2-local.properties \
  -Dlethe.example.log="$PWD/target/example.log" \
  -cp "examples/target/classes:$(cat "$classpath_file")" "io.lethe.examples.$job" "$@"
