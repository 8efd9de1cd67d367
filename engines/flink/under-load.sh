#!/usr/bin/env bash
# The engine tests under load: FlinkParentFirstTest and FlinkJobJarTest, N times in a row (default
# 10), with every core kept busy by a CPU burner (Debian's stress-ng) for the runs only.
#
#   bash engines/flink/under-load.sh [N]
#
# Each run is the module's own Maven command (-am: the upstream modules come from this checkout).
# Prints one line per run and the tally; exits 0 only when every run passed. Surefire's reports of a
# failed run are kept as target/under-load/run-K (a loader not collected leaves its heap dump there).
set -uo pipefail
cd "$(dirname "$0")/../.."

runs="${1:-10}"
command -v stress-ng >/dev/null || { echo "stress-ng is missing: apt-get install -y stress-ng" >&2; exit 2; }
keep=engines/flink/target/under-load
rm -rf "$keep" && mkdir -p "$keep"

stress-ng --cpu "$(nproc)" --timeout 6h >/dev/null 2>&1 &
burner=$!
trap 'kill "$burner" 2>/dev/null; wait "$burner" 2>/dev/null' EXIT
echo "$(date -u +%FT%TZ) stress-ng --cpu $(nproc) (pid $burner); $(uptime)"

passed=0
for k in $(seq 1 "$runs"); do
  start=$(date +%s)
  log="$keep/run-$k.log"
  if mvn -B -o -pl engines/flink -am verify -Dtest='FlinkParentFirstTest,FlinkJobJarTest' \
      -Dsurefire.failIfNoSpecifiedTests=false >"$log" 2>&1; then
    passed=$((passed + 1)); verdict=passed; rm -f "$log"
  else
    verdict="FAILED (log: $log)"
    cp -r engines/flink/target/surefire-reports "$keep/run-$k" 2>/dev/null
    cp engines/flink/target/*.hprof* "$keep/run-$k/" 2>/dev/null
  fi
  echo "$(date -u +%T) run $k/$runs $verdict in $(( $(date +%s) - start )) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "$passed of $runs passed in a row under stress-ng --cpu $(nproc); $(uptime)"
[ "$passed" = "$runs" ]
