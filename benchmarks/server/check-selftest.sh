#!/usr/bin/env bash
# Shows that check.py catches a peer that answers differently: the example server, and wrong_peer.py
# in front of it in each mode; check.py must fail prob, class and nan and pass none (builds like
# load.sh unless load.sh's build is there):
#
#   bash benchmarks/server/check-selftest.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/benchmarks/server"
results="$root/benchmarks/target/check-selftest"
port="${JDLPACK_SERVER_PORT:-18090}"
java="${JDLPACK_JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java /usr/lib/jvm/*2[2-9]*/bin/java 2>/dev/null | head -1)}"
rm -rf "$results"
mkdir -p "$results"
cd "$root"
# load.sh's build when there is one, else the same reactor build.
if [ -f "$root/benchmarks/target/server-results/classpath.txt" ] && [ -d "$root/examples/target/classes" ]; then
  cp "$root/benchmarks/target/server-results/classpath.txt" "$results/"
else
  mvn -B -q -DskipTests package dependency:build-classpath -pl examples -am \
    -Dmdep.outputFile="$results/classpath.txt" -Dmdep.includeScope=runtime
fi
python3 "$here/payload.py" 64 "$results/body-4k.bin"
setsid "$java" --enable-native-access=ALL-UNNAMED -Dserver.port="$port" \
  -cp "$root/examples/target/classes:$(cat "$results/classpath.txt")" org.jdlpack.examples.server.InferenceServer \
  > "$results/server.log" 2>&1 < /dev/null &
sessions=($!)
trap 'for s in "${sessions[@]}"; do kill -TERM -- "-$s" 2>/dev/null || true; done' EXIT
for _ in $(seq 1 120); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/classify")" != 000 ] && break
  sleep 0.5
done
failed=0
peer=$((port + 1))
for mode in prob class nan none; do
  setsid python3 "$here/wrong_peer.py" "$port" "$peer" "$mode" > "$results/peer-$mode.log" 2>&1 < /dev/null &
  sessions+=($!)
  sleep 1
  if python3 "$here/check.py" "$mode" "$port" "$peer" /classify "$results/body-4k.bin" > "$results/check-$mode.txt"; then got=pass; else got=fail; fi
  want=$([ "$mode" = none ] && echo pass || echo fail)
  echo "$mode: check.py says $got (want $want): $(tail -1 "$results/check-$mode.txt")"
  [ "$got" = "$want" ] || failed=1
  peer=$((peer + 1))
done
[ "$failed" = 0 ] && echo "check-selftest: 4 passed, 0 failed" || { echo "check-selftest: FAILED"; exit 1; }
