#!/usr/bin/env bash
# The README's main job: page views per page in tumbling event-time windows over a generated
# click stream, on a local MiniCluster with the Lethe backend. Prints progress while it runs and
# a report at the end (records, windows, page drops, local state, oldest tombstone against D_th,
# and whether the results equal a plain Java computation of the same stream). About a minute, after
# a first build on a fresh machine (toolchain and build included, see scripts/build-if-needed.sh).
# Options go to the job, e.g. --seconds 20, --rate 200000, --backend hashmap.
set -euo pipefail
exec "$(dirname "$0")/run-example.sh" ClickWindows "$@"
