#!/usr/bin/env bash
# Profiles one server under the load of benchmarks/run.sh server (4 KiB bodies, 8 connections):
#   ASYNC_PROFILER=/path/to/libasyncProfiler.so bash benchmarks/server/profile.sh jdlpack|expert EVENT SECONDS
# EVENT: itimer (this machine has no perf events), alloc, or none (no profiler: requests/s and the
# heap, inference and request time per request from GET /stats). Writes collapsed stacks to
# benchmarks/target/server-profile/NAME-EVENT.txt. Run `bash benchmarks/run.sh server` (or
# SERVERS="jdlpack ort-java-expert" ... with ENDURANCE 0) once first: it builds the class path and the
# Java peers this uses. The library is in tools.profiler:async-profiler:4.2:jar:linux-x64 (Maven Central).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
name="$1" event="$2" seconds="$3"
out="$root/benchmarks/target/server-profile"
mkdir -p "$out"
java="${JDLPACK_JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java /usr/lib/jvm/*2[2-9]*/bin/java 2>/dev/null | head -1)}"
results="$root/benchmarks/target/server-results"
classpath="$root/examples/target/classes:$(cat "$results/classpath.txt")"
model="$root/examples/src/main/resources/org/jdlpack/examples/server/scorer.onnx"
port=18090
agent=()
if [ "$event" != none ]; then
  : "${ASYNC_PROFILER:?set ASYNC_PROFILER to libasyncProfiler.so}"
  agent=("-agentpath:$ASYNC_PROFILER=start,event=$event,file=$out/$name-$event.txt,collapsed")
fi
case "$name" in
  jdlpack) command=("$java" --enable-native-access=ALL-UNNAMED -Xms2g -Xmx2g "${agent[@]}" -Dserver.port=$port -cp "$classpath"
      org.jdlpack.examples.server.InferenceServer) ;;
  expert) command=("$java" -Xms2g -Xmx2g "${agent[@]}" -cp "$root/benchmarks/target/server-peers/java:$classpath" PeerServer expert
      $port "$model") ;;
  *) echo "usage: $0 jdlpack|expert itimer|alloc|none SECONDS" >&2; exit 2 ;;
esac
setsid "${command[@]}" > "$out/$name.log" 2>&1 &
server=$!
trap 'kill -TERM -- -$server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do curl -s -o /dev/null --max-time 1 "localhost:$port/classify" && break; sleep 0.5; done
load() { BODY="$results/body-4k.bin" SHAPE=64,16 wrk -t2 -c8 -d"$1"s -s "$root/benchmarks/server/post.lua" "http://127.0.0.1:$port"; }
load 5 > /dev/null # warm-up
before="$(curl -s "localhost:$port/stats")"
load "$seconds" | grep RESULT
after="$(curl -s "localhost:$port/stats")"
python3 - "$before" "$after" <<'PY'
import re, sys
a, b = (dict(re.findall(r'(\w+)=(\d+)', s)) for s in sys.argv[1:])
n = max(1, int(b['ok']) - int(a['ok']))
per = lambda k: (int(b[k]) - int(a[k])) // n
print(f"requests={n} heap_per_request={per('allocatedBytes')} request_ns={per('requestNanos')} inference_ns={per('inferenceNanos')}")
PY
