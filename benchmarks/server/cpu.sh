#!/usr/bin/env bash
# CPU time per request of the JVM servers of benchmarks/run.sh server, measured where throughput is not
# (a shared, busy machine): each server in turn under the same wrk load, its process's CPU time
# (utime + stime from /proc) and heap allocated (GET /stats) divided by the requests it answered.
#   [ROUNDS=3] [PAYLOADS="4k 4m"] [CONNECTIONS="8 64"] [SECONDS=10] bash benchmarks/server/cpu.sh SERVER...
# SERVER: jdlpack, jdlpack-ortjava, ort-java-expert, ort-java-tutorial, or one of them as NAME=DIR, run
# on the example classes in DIR instead of examples/target/classes (a build before a change). Every round starts each server
# afresh (a 5 s warm-up per payload first). PAIRED=1 runs the servers at once instead, each on its own port
# under its own wrk, so that the neighbours' load falls on all of them alike. Prints one TSV line per measurement: round, server, payload,
# connections, requests, CPU µs per request, heap bytes per request,
# nanoseconds per request inside the run permit (GET /stats's inferenceNanos). Run `bash benchmarks/run.sh server`
# once first (as profile.sh needs): the class path, the bodies and the Java peers.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/benchmarks/server"
results="$root/benchmarks/target/server-results"
port="${JDLPACK_SERVER_PORT:-18090}"
cores="$(nproc)"
java="${JDLPACK_JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java /usr/lib/jvm/*2[2-9]*/bin/java 2>/dev/null | head -1)}"
dependencies="$(cat "$results/classpath.txt")"
model="$root/examples/src/main/resources/org/jdlpack/examples/server/scorer.onnx"
source "$here/servers.sh"
hz="$(getconf CLK_TCK)"
stats_now() { # GET /stats, asked again while a busy machine lets it time out
  local s
  for _ in 1 2 3 4 5; do
    s="$(stats)"
    [ -n "$s" ] && { echo "$s"; return; }
  done
  echo "GET /stats did not answer" >&2
  exit 1
}
field() { sed -n "s/.*[ [,]$1=\([0-9]*\).*/\1/p; s/^$1=\([0-9]*\).*/\1/p" <<<"$2" | head -1; }
load() { # payload connections seconds [port]
  local rows
  rows=$([ "$1" = 4m ] && echo 65536 || echo 64)
  BODY="$results/body-$1.bin" SHAPE="$rows,16" ROUTE="" wrk -t2 -c"$2" -d"$3"s --timeout 30s -s "$here/post.lua" \
    "http://127.0.0.1:${4:-$port}" > /dev/null 2>&1 || true
}
line() { # round spec payload connections before after ticks-before ticks-after
  local n
  n=$(( $(field ok "$6") - $(field ok "$5") ))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$n" \
    "$(python3 -c "print(f'{($8 - $7) * 1e6 / $hz / max(1, $n):.1f}')")" \
    "$(( ($(field allocatedBytes "$6") - $(field allocatedBytes "$5")) / (n > 0 ? n : 1) ))" \
    "$(( ($(field inferenceNanos "$6") - $(field inferenceNanos "$5")) / (n > 0 ? n : 1) ))"
}
printf 'round\tserver\tpayload\tconnections\trequests\tcpu_us_per_request\theap_bytes_per_request\tinference_ns_per_request\n'
sids=()
trap 'for sid in "${sids[@]}"; do stop_server "$sid"; done' EXIT
base_port="$port"
for round in $(seq 1 "${ROUNDS:-3}"); do
  if [ -n "${PAIRED:-}" ]; then # every server at once, each under its own wrk: the same neighbours for all
    sids=() ports=()
    for i in $(seq 1 $#); do
      spec="${!i}" server="${spec%%=*}" classes="$root/examples/target/classes"
      [ "$spec" = "$server" ] || classes="${spec#*=}"
      classpath="$classes:$dependencies" port=$((base_port + 2 * i))
      start_server "$server" "$port" "cpu-$i-round$round" || exit 1
      sids+=("$server_sid") ports+=("$port")
    done
    for payload in ${PAYLOADS:-4k 4m}; do
      loads=()
      for i in "${!ports[@]}"; do load "$payload" 8 5 "${ports[$i]}" & loads+=($!); done
      wait "${loads[@]}" # not a bare wait: the servers are children too
      for sid in "${sids[@]}"; do wait_idle "$sid" > /dev/null; done
      for c in ${CONNECTIONS:-8 64}; do
        befores=() ticks=()
        for i in "${!ports[@]}"; do port="${ports[$i]}"; befores+=("$(stats_now)"); ticks+=("$(session_ticks "${sids[$i]}")"); done
        loads=()
        for i in "${!ports[@]}"; do load "$payload" "$c" "${SECONDS_EACH:-10}" "${ports[$i]}" & loads+=($!); done
        wait "${loads[@]}"
        for sid in "${sids[@]}"; do wait_idle "$sid" > /dev/null; done
        for i in "${!ports[@]}"; do
          port="${ports[$i]}" j=$((i + 1))
          line "$round" "${!j}" "$payload" "$c" "${befores[$i]}" "$(stats_now)" "${ticks[$i]}" "$(session_ticks "${sids[$i]}")"
        done
      done
    done
    for sid in "${sids[@]}"; do stop_server "$sid"; done
    sids=()
    continue
  fi
  for spec in "$@"; do
    server="${spec%%=*}" classes="$root/examples/target/classes"
    [ "$spec" = "$server" ] || classes="${spec#*=}"
    classpath="$classes:$dependencies"
    start_server "$server" "$port" "cpu-$server-round$round" || exit 1
    sids=("$server_sid")
    for payload in ${PAYLOADS:-4k 4m}; do
      load "$payload" 8 5
      wait_idle "$server_sid" > /dev/null
      for c in ${CONNECTIONS:-8 64}; do
        before="$(stats_now)"; t0="$(session_ticks "$server_sid")"
        load "$payload" "$c" "${SECONDS_EACH:-10}"
        wait_idle "$server_sid" > /dev/null
        line "$round" "$spec" "$payload" "$c" "$before" "$(stats_now)" "$t0" "$(session_ticks "$server_sid")"
      done
    done
    stop_server "$server_sid"
    sids=()
  done
done
