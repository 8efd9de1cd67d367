#!/usr/bin/env bash
# Runs the GPU check from the bundle build.sh made: the CUDA suite (and the CuPy / PyTorch
# exchange when python3 there has them), then the bandwidth table against C cudaMemcpy from the
# same run. Needs no Maven, no compiler and no network.
#
#   bash run.sh [bytes] [repeats]     (default 256 MiB, 20 repeats)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
java="$here/runtime/bin/java"
cp="$(ls "$here"/lib/*.jar | tr '\n' ':')"
export JDLPACK_PREBUILT="$here/native" JDLPACK_BUILD_DIR="${TMPDIR:-/tmp}/jdlpack-gpu-check"
bytes="${1:-268435456}"
repeats="${2:-20}"

echo "== runtime: $("$java" -version 2>&1 | head -1)"
"$java" --enable-native-access=ALL-UNNAMED -cp "$cp" org.junit.platform.console.ConsoleLauncher execute \
  --disable-banner --details=summary --details-theme=ascii --select-package=org.jdlpack.cuda 2>&1 | tee "$JDLPACK_BUILD_DIR.log"
status=${PIPESTATUS[0]}

summary() { grep -E "tests (successful|failed|skipped|aborted)" "$JDLPACK_BUILD_DIR.log" | tr -d '[]' | tr -s ' ' | sed 's/^ //; s/ $//' | paste -sd ',' | sed 's/,/, /g'; }
java_bw=$("$java" --enable-native-access=ALL-UNNAMED -cp "$cp" org.jdlpack.cuda.CudaBandwidth "$bytes" "$repeats" 2>&1)
c_bw=$("$here/native/cuda_bandwidth" "$bytes" "$repeats" 2>&1)
value() { echo "$1" | awk -v k="$2" '$1 == k {print $2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }

echo
echo "| measure | jdlpack | C cudaMemcpy | ratio |"
echo "|---|---|---|---|"
for d in h2d d2h; do
  j=$(value "$java_bw" "java_${d}_gbps"); c=$(value "$c_bw" "c_${d}_gbps")
  echo "| ${d} GB/s ($bytes bytes x $repeats, pinned) | ${j:-n/a} | ${c:-n/a} | $(ratio "${j:-0}" "${c:-0}") |"
done
echo "| tests | $(summary) | | |"
[ -z "$(value "$java_bw" java_h2d_gbps)" ] && echo "bandwidth (jdlpack): $java_bw"
[ -z "$(value "$c_bw" c_h2d_gbps)" ] && echo "bandwidth (C): $c_bw"
exit $status
