#!/usr/bin/env bash
# Profiles one server of benchmarks/run.sh server under its load (PAYLOAD bodies, 4k or 4m, default 4k;
# CONNECTIONS connections, default 8):
#   ASYNC_PROFILER=/path/to/libasyncProfiler.so [PAYLOAD=4m] [CONNECTIONS=64] bash benchmarks/server/profile.sh SERVER EVENT SECONDS
# SERVER: a name from load.sh's list (jdlpack, jdlpack-numpy, ort-java-expert, ort-java-tutorial; the JVM
# ones). EVENT: itimer (this machine has no perf events), alloc, or none (no profiler: requests/s and the
# heap, inference and request time per request from GET /stats). Writes collapsed stacks to
# benchmarks/target/server-results/profile-SERVER-EVENT.txt. Run `bash benchmarks/run.sh server` once
# first (SERVERS="jdlpack ort-java-expert" with ENDURANCE 0 will do): it builds the class path, the
# bodies and the Java peers this uses. The library is in tools.profiler:async-profiler:4.2:jar:linux-x64
# (Maven Central).
set -euo pipefail
server="$1" event="$2" seconds="$3"
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/benchmarks/server"
results="$root/benchmarks/target/server-results"
port="${JDLPACK_SERVER_PORT:-18090}"
cores="$(nproc)"
java="${JDLPACK_JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java /usr/lib/jvm/*2[2-9]*/bin/java 2>/dev/null | head -1)}"
classpath="$root/examples/target/classes:$(cat "$results/classpath.txt")"
model="$root/examples/src/main/resources/org/jdlpack/examples/server/scorer.onnx"
source "$here/servers.sh"
options="-Xms2g -Xmx2g"
if [ "$event" != none ]; then
  : "${ASYNC_PROFILER:?set ASYNC_PROFILER to libasyncProfiler.so}"
  options+=" -agentpath:$ASYNC_PROFILER=start,event=$event,file=$results/profile-$server-$event.txt,collapsed"
fi
JVM_OPTIONS="$options" start_server "$server" "$port" "profile-$server" || exit 1
trap 'stop_server "$server_sid"' EXIT
load() {
  BODY="$results/body-${PAYLOAD:-4k}.bin" SHAPE="$([ "${PAYLOAD:-4k}" = 4m ] && echo 65536 || echo 64),16" ROUTE="$(route_of "$server")" \
    wrk -t2 -c"${CONNECTIONS:-8}" -d"$1"s -s "$here/post.lua" "http://127.0.0.1:$port"
}
load 5 > /dev/null # warm-up
before="$(stats)"
load "$seconds" | grep RESULT
after="$(stats)"
python3 - "$before" "$after" <<'PY'
import re, sys
a, b = (dict(re.findall(r'(\w+)=(\d+)', s)) for s in sys.argv[1:])
n = max(1, int(b['ok']) - int(a['ok']))
per = lambda k: (int(b[k]) - int(a[k])) // n
print(f"requests={n} heap_per_request={per('allocatedBytes')} request_ns={per('requestNanos')} inference_ns={per('inferenceNanos')}")
PY
