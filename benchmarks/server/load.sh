#!/usr/bin/env bash
# The example inference server under load (bash benchmarks/run.sh server [SECONDS] [ENDURANCE_SECONDS]):
# wrk against 127.0.0.1 at concurrency 1, 8 and 64, zero-copy and copying routes, 4 KiB and 4 MiB
# requests, SECONDS each (default 60); then an endurance run of ENDURANCE_SECONDS (default 300) at
# concurrency 64 with 1% malformed requests and clients disconnecting mid-request. Writes the
# section "The inference server under load" of docs/benchmarks.md and docs/benchmarks-server.png.
#
# Needs wrk (apt-get install wrk), curl, python3 with NumPy (the server's Python steps) and, for
# the picture, gnuplot (apt-get install gnuplot-nox).
set -euo pipefail
seconds="${1:-60}"
endurance="${2:-300}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/benchmarks/server"
results="$root/benchmarks/target/server-results"
port="${JDLPACK_SERVER_PORT:-18090}"
java="${JDLPACK_JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java /usr/lib/jvm/*2[2-9]*/bin/java 2>/dev/null | head -1)}"
command -v wrk >/dev/null || { echo "wrk not found: apt-get install wrk" >&2; exit 2; }
rm -rf "$results"
mkdir -p "$results"
cd "$root"

# Build through the reactor (nothing installed) and take the examples module's class path.
mvn -B -q -DskipTests package dependency:build-classpath -pl examples -am \
  -Dmdep.outputFile="$results/classpath.txt" -Dmdep.includeScope=runtime
classpath="$root/examples/target/classes:$(cat "$results/classpath.txt")"
python3 "$here/payload.py" 64 "$results/body-4k.bin"       # 64 rows x 16 float32 = 4 KiB
python3 "$here/payload.py" 65536 "$results/body-4m.bin"    # 65,536 rows = 4 MiB
"$java" -version 2>&1 | head -1 > "$results/jdk.txt"
nproc > "$results/cores.txt"
echo "$seconds $endurance" > "$results/durations.txt"

server_pid=
start_server() { # name, then JVM options
  local name="$1"
  shift
  "$java" --enable-native-access=ALL-UNNAMED "$@" -Xlog:gc:file="$results/gc-$name.log" \
    -Dserver.port="$port" -cp "$classpath" org.jdlpack.examples.server.InferenceServer > "$results/server-$name.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 120); do
    grep -q "inference server on" "$results/server-$name.log" 2>/dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$results/server-$name.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "the server did not start" >&2
  exit 1
}
stop_server() {
  kill "$server_pid"
  wait "$server_pid" || true
}
stats() { curl -s "http://127.0.0.1:$port/stats"; }
field() { sed -n "s/.*[ [,]$1=\([0-9]*\).*/\1/p; s/^$1=\([0-9]*\).*/\1/p" <<<"$2" | head -1; }
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$server_pid/status"; }
run_wrk() { # out-file route body shape connections seconds [malformed-every]
  local threads=$(($4 < 2 ? 1 : 2))
  BODY="$2" SHAPE="$3" ROUTE="$1" MALFORMED_EVERY="${7:-0}" \
    wrk -t"$threads" -c"$4" -d"$5"s --timeout 30s -s "$here/post.lua" "http://127.0.0.1:$port" > "$6" 2>&1 || true
}

start_server load -Xms2g -Xmx2g
printf 'payload\troute\tconnections\trps\tp50_ms\tp99_ms\theap_bytes_per_request\tinference_share\tnon2xx\terrors\n' > "$results/load.tsv"
for payload in 4k 4m; do
  body="$results/body-$payload.bin"
  rows=$([ "$payload" = 4k ] && echo 64 || echo 65536)
  for route in "" copy; do # warm-up: the JIT, the pool, NumPy's caches
    run_wrk "$route" "$body" "$rows,16" 8 "$(( seconds < 10 ? seconds : 10 ))" "$results/warmup-$payload-${route:-zero}.txt"
  done
  for connections in 1 8 64; do
    for route in "" copy; do
      name="$payload-${route:-zero-copy}-c$connections"
      before="$(stats)"
      run_wrk "$route" "$body" "$rows,16" "$connections" "$seconds" "$results/$name.txt"
      after="$(stats)"
      line="$(grep '^RESULT' "$results/$name.txt" || echo 'RESULT requests=0 seconds=0 rps=0 p50_ms=0 p99_ms=0 non2xx=0 errors=0')"
      requests=$(( $(field ok "$after") - $(field ok "$before") + $(field badRequest "$after") - $(field badRequest "$before") ))
      heap=$(( ($(field allocatedBytes "$after") - $(field allocatedBytes "$before")) / (requests > 0 ? requests : 1) ))
      share=$(python3 -c "print(f'{($(field inferenceNanos "$after") - $(field inferenceNanos "$before")) / max(1, $(field requestNanos "$after") - $(field requestNanos "$before")):.3f}')")
      get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$payload" "${route:-zero-copy}" "$connections" "$(get rps)" \
        "$(get p50_ms)" "$(get p99_ms)" "$heap" "$share" "$(get non2xx)" "$(get errors)" | tee -a "$results/load.tsv"
    done
  done
done
stats > "$results/load-stats.txt"
stop_server

# Endurance: a fresh server, concurrency 64, 4 KiB zero-copy requests, 1 in 100 malformed, and clients
# that send half a body and hang up, five a second. RSS is sampled at each fifth of the run. The heap
# is touched in full at start (AlwaysPreTouch), so that RSS growth is native memory, not the heap's
# first use; 512 MiB is plenty for this route.
start_server endurance -Xms512m -Xmx512m -XX:+AlwaysPreTouch
python3 "$here/disconnect.py" "$port" 5 > "$results/disconnects.txt" 2>&1 &
disconnector=$!
run_wrk "" "$results/body-4k.bin" "64,16" 64 "$endurance" "$results/endurance.txt" 100 &
load=$!
: > "$results/endurance-rss.tsv"
for fifth in 1 2 3 4 5; do
  sleep "$(python3 -c "print($endurance / 5 - (1 if $fifth == 5 else 0))")"
  printf '%s\t%s\n' "$(python3 -c "print(round($endurance * $fifth / 5))")" "$(rss_kib)" >> "$results/endurance-rss.tsv"
done
wait "$load"
kill -TERM "$disconnector"
wait "$disconnector" || true
sleep 2 # let the last requests finish
stats > "$results/endurance-stats.txt"
stop_server

python3 "$here/report.py" "$results" "$root/docs"
if command -v gnuplot >/dev/null; then
  gnuplot "$results/server-plot.gp"
else
  echo "gnuplot not found (apt-get install gnuplot-nox): docs/benchmarks-server.png was not redrawn" >&2
fi
