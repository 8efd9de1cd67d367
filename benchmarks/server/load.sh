#!/usr/bin/env bash
# The example inference server and its peers under load (bash benchmarks/run.sh server [SECONDS]
# [ENDURANCE_SECONDS]). Each server below answers the same HTTP contract with the same model
# (scorer.onnx) and is first checked against the example server's default route (check.py: the load
# bodies and the bad requests); then the same wrk script (post.lua) runs against it at 4 KiB and 4 MiB,
# CONNECTIONS connections (default 1 8 64), SECONDS each (default 10) after a warm-up, waiting after
# each wrk run until the server is idle. ROUNDS rounds (default 3) run one after another; in each
# round every server is started afresh, so the medians are over processes. Then an endurance run of
# ENDURANCE_SECONDS (default 300; 0 skips it) on each jdlpack route: concurrency 64, 1% malformed
# requests, clients that hang up mid-body. Writes the section "The inference server under load" of
# docs/benchmarks.md and docs/benchmarks-server.png (benchmarks/server/report.py).
#
# Servers (SERVERS="..." runs a subset, in that order):
#   jdlpack          the example server's default route, POST /classify, on ONNX Runtime's C API (its default)
#   jdlpack-numpy    the example server's NumPy route, POST /classify?route=numpy
#   jdlpack-ortjava  the default route on ONNX Runtime Java's OrtSession through OrtBridge (-Dserver.ort=java),
#                    the route before issue 44; not in the default list: SERVERS="jdlpack jdlpack-ortjava ort-java-expert"
#   ort-java-expert  ONNX Runtime Java by hand: pooled direct buffers, pinned outputs (peers/java)
#   ort-java-tutorial ONNX Runtime Java with arrays (peers/java)
#   node-1, node-N   Node + onnxruntime-node, one process / one worker per core (peers/node)
#   fastapi-1, fastapi-N  FastAPI + uvicorn + onnxruntime + NumPy, one worker / one per core (peers/python)
# A peer whose runtime or packages are missing is skipped with what to install; one that answers
# differently from the example server is skipped with its differences (check.py).
#
# Needs wrk (apt-get install wrk), curl, python3 with NumPy (the server's Python steps) and, for the
# picture, gnuplot (apt-get install gnuplot-nox). The Node peers need node >= 20 and npm (the npm
# registry, once: the packages are cached under ~/.cache/jdlpack/node); the Python peers need pip
# reaching an index with onnxruntime, fastapi and uvicorn (cached under ~/.cache/jdlpack/venvs;
# PEER_PIP_OPTIONS adds options, default: the local wheel index if /opt/pypi/simple exists).
set -euo pipefail
seconds="${1:-10}"
endurance="${2:-300}"
rounds="${ROUNDS:-3}"
connections_list="${CONNECTIONS:-1 8 64}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/benchmarks/server"
results="$root/benchmarks/target/server-results"
port="${JDLPACK_SERVER_PORT:-18090}"
cores="$(nproc)"
servers="${SERVERS:-jdlpack jdlpack-numpy ort-java-expert ort-java-tutorial node-1 node-N fastapi-1 fastapi-N}"
java="${JDLPACK_JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java /usr/lib/jvm/*2[2-9]*/bin/java 2>/dev/null | head -1)}"
javac="$(dirname "$java")/javac"
model="$root/examples/src/main/resources/org/jdlpack/examples/server/scorer.onnx"
command -v wrk >/dev/null || { echo "wrk not found: apt-get install wrk" >&2; exit 2; }
rm -rf "$results"
mkdir -p "$results"
cd "$root"
source "$here/servers.sh"

# Build through the reactor (nothing installed) and take the examples module's class path, which
# holds the ONNX Runtime jar the Java peers compile against.
mvn -B -q -DskipTests package org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -pl examples -am \
  -Dmdep.outputFile="$results/classpath.txt" -Dmdep.includeScope=runtime
classpath="$root/examples/target/classes:$(cat "$results/classpath.txt")"
python3 "$here/payload.py" 64 "$results/body-4k.bin"       # 64 rows x 16 float32 = 4 KiB
python3 "$here/payload.py" 65536 "$results/body-4m.bin"    # 65,536 rows = 4 MiB
"$java" -version 2>&1 | head -1 > "$results/jdk.txt"
echo "$cores" > "$results/cores.txt"
echo "$seconds $endurance $rounds" > "$results/durations.txt"
: > "$results/skipped.txt"
: > "$results/versions.txt"

# Prepare every peer once (compile, npm install, venv); a peer that cannot be prepared is skipped.
runnable=()
for server in $servers; do
  if reason="$(prepare "$server" 2>&1)"; then
    runnable+=("$server")
  else
    echo "$server: skipped: $(tail -1 <<<"$reason")" | tee -a "$results/skipped.txt" >&2
  fi
done

field() { sed -n "s/.*[ [,]$1=\([0-9]*\).*/\1/p; s/^$1=\([0-9]*\).*/\1/p" <<<"$2" | head -1; }
run_wrk() { # route body shape connections seconds out-file [malformed-every]
  local threads=$(($4 < 2 ? 1 : 2))
  BODY="$2" SHAPE="$3" ROUTE="$1" MALFORMED_EVERY="${7:-0}" \
    wrk -t"$threads" -c"$4" -d"$5"s --timeout 30s -s "$here/post.lua" "http://127.0.0.1:$port" > "$6" 2>&1 || true
}

# Before any load: every peer against the example server's default route (check.py), which runs on a
# second port as the reference. A peer that answers differently is not measured.
reference_port=$((port + 1))
checked=()
if [ "${#runnable[@]}" -gt 0 ]; then
  start_server jdlpack "$reference_port" check-reference || exit 1
  reference_sid=$server_sid
  for server in "${runnable[@]}"; do
    if ! start_server "$server" "$port" "check-$server"; then
      echo "$server: skipped: it did not start (see $results/server-check-$server.log)" | tee -a "$results/skipped.txt" >&2
      continue
    fi
    if python3 "$here/check.py" "$server" "$reference_port" "$port" "/classify$(query_of "$server")" "$results/body-4k.bin" "$results/body-4m.bin" \
      > "$results/check-$server.txt" 2>&1; then
      checked+=("$server")
    else
      echo "$server: skipped: answers differently from the example server (see $results/check-$server.txt)" \
        | tee -a "$results/skipped.txt" >&2
    fi
    tail -1 "$results/check-$server.txt"
    stop_server "$server_sid"
  done
  stop_server "$reference_sid"
fi

printf 'round\tserver\tpayload\tconnections\trps\tp50_ms\tp99_ms\theap_bytes_per_request\tnon2xx\terrors\tidle_wait_s\tload1\n' > "$results/load.tsv"
for round in $(seq 1 "$rounds"); do
  for server in "${checked[@]}"; do
    if ! start_server "$server" "$port" "$server-round$round"; then
      echo "$server: round $round skipped: it did not start (see $results/server-$server-round$round.log)" | tee -a "$results/skipped.txt" >&2
      continue
    fi
    route="$(route_of "$server")"
    for payload in 4k 4m; do
      rows=$([ "$payload" = 4k ] && echo 64 || echo 65536)
      # Warm-up: the JIT, the pools, NumPy's and ONNX Runtime's first runs.
      run_wrk "$route" "$results/body-$payload.bin" "$rows,16" 8 "$(( seconds < 10 ? seconds : 10 ))" \
        "$results/warmup-$server-$payload-round$round.txt"
      wait_idle "$server_sid" > /dev/null
      for connections in $connections_list; do
        name="$server-$payload-c$connections-round$round"
        load1="$(cut -d' ' -f1 /proc/loadavg)"
        before="$(stats)"
        run_wrk "$route" "$results/body-$payload.bin" "$rows,16" "$connections" "$seconds" "$results/$name.txt"
        idle="$(wait_idle "$server_sid")"
        after="$(stats)"
        heap=-
        if [ -n "$(field allocatedBytes "$after")" ]; then
          requests=$(( $(field ok "$after") - $(field ok "$before") + $(field badRequest "$after") - $(field badRequest "$before") ))
          heap=$(( ($(field allocatedBytes "$after") - $(field allocatedBytes "$before")) / (requests > 0 ? requests : 1) ))
        fi
        line="$(grep '^RESULT' "$results/$name.txt" || echo 'RESULT requests=0 seconds=0 rps=0 p50_ms=0 p99_ms=0 non2xx=0 errors=0')"
        get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$server" "$payload" "$connections" "$(get rps)" \
          "$(get p50_ms)" "$(get p99_ms)" "$heap" "$(get non2xx)" "$(get errors)" "$idle" "$load1" | tee -a "$results/load.tsv"
      done
    done
    stop_server "$server_sid"
  done
done

# Endurance, on each jdlpack route: a fresh server, concurrency 64, 4 KiB requests, 1 in 100
# malformed, and clients that send half a body and hang up, five a second. RSS is sampled at each
# fifth of the run. The heap is touched in full at start (AlwaysPreTouch), so that RSS growth is
# native memory, not the heap's first use.
: > "$results/endurance-routes.txt"
if [ "$endurance" -gt 0 ]; then
  for server in jdlpack jdlpack-numpy; do
    [[ " $servers " == *" $server "* ]] || continue
    JVM_OPTIONS="-Xms512m -Xmx512m -XX:+AlwaysPreTouch" start_server "$server" "$port" "endurance-$server" || exit 1
    python3 "$here/disconnect.py" "$port" 5 "/classify$(query_of "$server")" > "$results/disconnects-$server.txt" 2>&1 &
    disconnector=$!
    run_wrk "$(route_of "$server")" "$results/body-4k.bin" "64,16" 64 "$endurance" "$results/endurance-$server.txt" 100 &
    load=$!
    : > "$results/endurance-rss-$server.tsv"
    for fifth in 1 2 3 4 5; do
      sleep "$(python3 -c "print($endurance / 5 - (1 if $fifth == 5 else 0))")"
      printf '%s\t%s\n' "$(python3 -c "print(round($endurance * $fifth / 5))")" "$(rss_kib "$server_sid")" >> "$results/endurance-rss-$server.tsv"
    done
    wait "$load"
    kill -TERM "$disconnector"
    wait "$disconnector" || true
    wait_idle "$server_sid" > /dev/null # let the last requests finish
    stats > "$results/endurance-stats-$server.txt"
    stop_server "$server_sid"
    echo "$server" >> "$results/endurance-routes.txt"
  done
fi

python3 "$here/report.py" "$results" "$root/docs"
if command -v gnuplot >/dev/null; then
  gnuplot "$results/server-plot.gp"
else
  echo "gnuplot not found (apt-get install gnuplot-nox): docs/benchmarks-server.png was not redrawn" >&2
fi
