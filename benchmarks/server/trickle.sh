#!/usr/bin/env bash
# Well-behaved clients beside slow ones (issue 41): for each server and each INTERVAL_MS, a fresh
# server, a warm-up, then three wrk runs of SECONDS each (default 10) with CONNECTIONS (default 8)
# clients looping 1-row requests: alone; during a trickle (trickle.py: every INTERVAL_MS a connection
# that sends the headers and 10 of its 64 body bytes, and hangs up after 1 s; started 2 s before
# wrk, so that its sockets are at their steady count); after it (2 s after the trickle stopped).
#
#   [SERVERS="jdlpack-numpy jdlpack"] [INTERVALS="100 10"] bash benchmarks/server/trickle.sh [SECONDS]
#
# Writes benchmarks/target/trickle-results/trickle.tsv and prints each row and, per server and
# interval, during/alone. SKIP_BUILD=1 reuses the last build's class path. Needs wrk, curl and
# python3 with NumPy, as load.sh does.
set -euo pipefail
seconds="${1:-10}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/benchmarks/server"
results="$root/benchmarks/target/trickle-results"
port="${JDLPACK_SERVER_PORT:-18090}"
cores="$(nproc)"
servers="${SERVERS:-jdlpack-numpy jdlpack}"
intervals="${INTERVALS:-100 10}"
connections="${CONNECTIONS:-8}"
java="${JDLPACK_JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java /usr/lib/jvm/*2[2-9]*/bin/java 2>/dev/null | head -1)}"
model="$root/examples/src/main/resources/org/jdlpack/examples/server/scorer.onnx"
command -v wrk >/dev/null || { echo "wrk not found: apt-get install wrk" >&2; exit 2; }
mkdir -p "$results"
cd "$root"
if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -f "$results/classpath.txt" ]; then
  # The plugin's version named: without it, the reactor's bom module resolves an old one that an offline build lacks.
  mvn -B -q -DskipTests package org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -pl examples -am \
    -Dmdep.outputFile="$results/classpath.txt" -Dmdep.includeScope=runtime
fi
classpath="$root/examples/target/classes:$(cat "$results/classpath.txt")"
source "$here/servers.sh"
python3 "$here/payload.py" 1 "$results/body-1row.bin"

wrk_result() { # route seconds -> the RESULT line of post.lua
  BODY="$results/body-1row.bin" SHAPE="1,16" ROUTE="$1" \
    wrk -t2 -c"$connections" -d"$2"s --timeout 30s -s "$here/post.lua" "http://127.0.0.1:$port" 2>&1 | grep '^RESULT' \
    || echo 'RESULT requests=0 seconds=0 rps=0 p50_ms=0 p99_ms=0 non2xx=0 errors=0'
}
get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

tsv="$results/trickle.tsv"
printf 'server\tinterval_ms\tphase\trps\tp50_ms\tp99_ms\tnon2xx\terrors\tslow_opened\tload1\n' > "$tsv"
for server in $servers; do
  for interval in $intervals; do
    name="$server-$interval"
    start_server "$server" "$port" "trickle-$name" || exit 1
    route="$(route_of "$server")"
    wrk_result "$route" "$(( seconds < 10 ? seconds : 10 ))" > /dev/null # warm-up: the JIT, the pools, NumPy's first runs
    wait_idle "$server_sid" > /dev/null
    alone=
    for phase in alone during after; do
      slow=-
      if [ "$phase" = during ]; then
        python3 "$here/trickle.py" "$port" "$interval" "/classify$(query_of "$server")" > "$results/slow-$name.txt" 2>&1 &
        trickler=$!
        sleep 2
      fi
      load1="$(cut -d' ' -f1 /proc/loadavg)"
      line="$(wrk_result "$route" "$seconds")"
      if [ "$phase" = during ]; then
        kill -TERM "$trickler"
        wait "$trickler" || true
        slow="$(sed -n 's/.*opened=\([0-9]*\).*/\1/p' "$results/slow-$name.txt")"
        sleep 2
      fi
      [ "$phase" = alone ] && alone="$(get rps "$line")"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$server" "$interval" "$phase" "$(get rps "$line")" "$(get p50_ms "$line")" \
        "$(get p99_ms "$line")" "$(get non2xx "$line")" "$(get errors "$line")" "$slow" "$load1" | tee -a "$tsv"
      if [ "$phase" = during ]; then
        python3 -c "print(f'$server, one slow connection every $interval ms: during/alone = {$(get rps "$line") / max($alone, 1e-9):.2f}x')"
      fi
    done
    stats > "$results/stats-$name.txt"
    stop_server "$server_sid"
  done
done
