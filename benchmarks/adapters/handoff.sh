#!/usr/bin/env bash
# The JVM-library adapters' hand-offs (docs/jvm-libraries.md, "Speed"): each adapter's JMH
# hand-off benchmark run by HandOffCpuTime, which times the same methods in thread CPU time with
# the routes taking turns, in PROCESSES fresh JVMs (default 3). Prints each process's table.
#
#   bash benchmarks/adapters/handoff.sh [PROCESSES]
#
# JavaCPP-based libraries (JavaCPP's pytorch, TensorFlow Java) are run twice: with JavaCPP's
# defaults, and with its memory accounting off (-Dorg.bytedeco.javacpp.maxPhysicalBytes=0
# -Dorg.bytedeco.javacpp.maxBytes=0), which takes about 1.5 us off every JavaCPP object made.
# Needs the adapters' libraries in the local Maven repository (a `mvn verify` puts them there).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
processes="${1:-3}"
java="${JDLPACK_JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java /usr/lib/jvm/*2[2-9]*/bin/java 2>/dev/null | head -1)}"
work="benchmarks/target/adapters"
mkdir -p "$work"
mvn -q -B -pl benchmarks -am package -DskipTests
# Each adapter's library jars, as its tests see them (the libraries are provided-scope).
for module in dlpack-javacpp-pytorch dlpack-djl dlpack-tensorflow-java; do
  mvn -q -B -pl "$module" -am package -DskipTests \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:build-classpath \
    -Dmdep.includeScope=test -DexcludeGroupIds=org.jdlpack -Dmdep.outputFile="$root/$work/$module.classpath"
done
run() { # module, then the JVM options and HandOffCpuTime's arguments
  local module="$1"; shift
  "$java" --enable-native-access=ALL-UNNAMED -cp "benchmarks/target/benchmarks.jar:$(cat "$work/$module.classpath")" "$@" 2>&1 \
    | grep -E '^#|cpu ns/op'
}
accounting_off=(-Dorg.bytedeco.javacpp.maxPhysicalBytes=0 -Dorg.bytedeco.javacpp.maxBytes=0)
main=org.jdlpack.benchmarks.HandOffCpuTime
for _ in $(seq "$processes"); do
  run dlpack-javacpp-pytorch "$main" TorchHandOffBenchmark label=javacpp-defaults
  run dlpack-javacpp-pytorch "${accounting_off[@]}" "$main" TorchHandOffBenchmark label=javacpp-accounting-off
  for elements in 256 262144; do
    run dlpack-djl -Dai.djl.offline=true -DOPT_OUT_TRACKING=true -DENGINE_CACHE_DIR="$root/$work/djl-cache" \
      "$main" DjlHandOffBenchmark elements=$elements
  done
  run dlpack-tensorflow-java "$main" TensorFlowHandOffBenchmark label=javacpp-defaults
  run dlpack-tensorflow-java "${accounting_off[@]}" "$main" TensorFlowHandOffBenchmark label=javacpp-accounting-off
done
