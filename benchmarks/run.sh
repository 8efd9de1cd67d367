#!/usr/bin/env bash
# Runs the benchmark suite and writes docs/benchmarks.md, docs/benchmarks.png and
# docs/benchmarks-threads.png.
#
#   bash benchmarks/run.sh short    # about 20 minutes on 2 cores
#   bash benchmarks/run.sh full     # about an hour: more forks and iterations
#   bash benchmarks/run.sh server [SECONDS] [ENDURANCE_SECONDS]
#                                   # the example inference server's routes and the peers a user would
#                                   # write instead (ONNX Runtime Java by hand and the tutorial way, Node,
#                                   # FastAPI), checked against it, then under wrk (benchmarks/server/load.sh):
#                                   # 4 KiB and 4 MiB, 1, 8 and 64 connections, SECONDS each (default 10),
#                                   # ROUNDS=3 rounds, then an endurance run of ENDURANCE_SECONDS (default
#                                   # 300, 0 skips it) on each jdlpack route; about an hour with the
#                                   # defaults on a quiet 2-core machine. A peer whose runtime is
#                                   # missing is skipped, saying what to install. SERVERS="..." picks
#                                   # servers (benchmarks/server/load.sh lists them): jdlpack-ortjava is
#                                   # the default route on ONNX Runtime Java (-Dserver.ort=java) instead
#                                   # of the C API; CONNECTIONS="8 64" and ROUNDS=N narrow the run.
#
# Needs what the tests need (gcc, python3 with NumPy, a JDK >= 22) plus gnuplot for the plots.
#
# Order: each JMH group runs in its own JVM, and a fresh JVM timing NumPy's np.from_dlpack round
# trip runs after each, so the NumPy processes are interleaved with the JMH forks and see the same
# machine. The export round trip, the figure compared with NumPy, runs as one fork per
# invocation, five times, each followed by a NumPy process: the report compares the best fork
# with the best NumPy process and shows both spreads.
set -euo pipefail
profile="${1:-short}"
root="$(cd "$(dirname "$0")/.." && pwd)"
if [ "$profile" = server ]; then
  shift
  exec bash "$root/benchmarks/server/load.sh" "$@"
fi
cd "$root"
java="${JDLPACK_JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java /usr/lib/jvm/*2[2-9]*/bin/java 2>/dev/null | head -1)}"
results="$root/benchmarks/target/results"
rm -rf "$results"
mkdir -p "$results"
export JDLPACK_BUILD_DIR="$root/benchmarks/target"

case "$profile" in
  short) jmh=(-f 1 -wi 3 -w 1 -i 5 -r 1); scaling_jmh=(-f 1 -wi 6 -w 1 -i 5 -r 1); roundtrips=5; python_rounds=3 ;;
  full) jmh=(-f 1 -wi 5 -w 2 -i 10 -r 2); scaling_jmh=(-f 1 -wi 8 -w 2 -i 10 -r 2); roundtrips=10; python_rounds=5 ;;
  *) echo "usage: $0 short|full|server [SECONDS] [ENDURANCE_SECONDS]" >&2; exit 2 ;;
esac

# Build through the reactor; nothing is installed into the shared local repository.
mvn -B -q -DskipTests package -pl benchmarks -am
jar="$root/benchmarks/target/benchmarks.jar"
run_java() { "$java" --enable-native-access=ALL-UNNAMED "$@"; }
"$java" -version 2>&1 | head -1 > "$results/jdk.txt"
available="$(run_java -Djmh.ignoreLock=true -jar "$jar" -l)"

# Benchmark classes by regex. Classes other branches add (an Arrow handoff) join the
# single-thread group when they exist; a regex that matches nothing is skipped. The Python bridge
# (PythonHandOffBenchmark) is a group of its own, below.
single_thread=('ExchangeBenchmark' 'LifetimeBenchmark' 'ZeroCopyBenchmark' '[.]CopyBenchmark[.]')
# The Arrow handoff moves a 3 GB column (a copy takes seconds): its own annotations (2 warm-up, 3
# measured iterations) hold, not the profile's; it needs about 13 GB of memory.
# Thread scaling: the export round trip, the default import, the shared-arena import (the old
# default), and the control with no shared state (upcalls only).
scaling='ExchangeBenchmark.exportPointerVersionedCConsumes$|LifetimeBenchmark.importDefaultReadClose$|LifetimeBenchmark.importSharedReadClose$|ExchangeBenchmark.upcallFromJavaThread$'

numpy_process=0
numpy() {
  numpy_process=$((numpy_process + 1))
  run_java -cp "$jar" org.jdlpack.benchmarks.NumPyRoundTrip | sed "s/^/process $numpy_process /" | tee -a "$results/numpy.txt"
}
jmh_run() { # name, then JMH arguments; the options are "${jmh[@]}" unless opts is set
  local name="$1"
  shift
  local -a options=("${jmh[@]}")
  if [ -n "${opts+x}" ]; then options=("${opts[@]}"); fi
  # jmh.ignoreLock: on a machine shared with other JMH users the lock only makes this run fail;
  # the figures are then noisier, which the report's ratios within one run tolerate.
  run_java -Djmh.ignoreLock=true -jar "$jar" "${options[@]}" -prof gc -rf json -rff "$results/$name.json" "$@" | tee "$results/$name.txt" | grep -E '^(Benchmark|[A-Z][A-Za-z]+Benchmark\.)' || true
}

for i in $(seq 1 "$roundtrips"); do
  jmh_run "roundtrip-$i" 'ExchangeBenchmark.exportPointerVersionedCConsumes$'
  numpy
done
for pattern in "${single_thread[@]}"; do
  if grep -Eq "$pattern" <<<"$available"; then
    jmh_run "single-${pattern//[^A-Za-z]/}" "$pattern"
  else
    echo "no benchmark matches $pattern: skipped"
  fi
done
numpy
# The Python bridge, whose targets are ratios within one run: the whole class python_rounds times,
# each benchmark in a fresh JVM every time, so every figure comes from several processes (the
# report gives the best and the median process). It needs NumPy; the exchange API benchmarks
# compile test-support's C peer (gcc).
if grep -Eq 'PythonHandOffBenchmark' <<<"$available"; then
  for i in $(seq 1 "$python_rounds"); do
    jmh_run "python-$i" 'PythonHandOffBenchmark'
  done
fi
if grep -Eq 'ArrowHandoffBenchmark' <<<"$available"; then
  opts=()
  jmh_run "single-Arrow" 'ArrowHandoffBenchmark'
  unset opts
fi
# Twice the warm-up: with 8 threads on 2 cores the JIT compiler threads get a small share of the
# CPU, and measured iterations of the import fell from 121,759 to 4,205 ns/op as its compilation
# finished late.
opts=("${scaling_jmh[@]}")
for threads in 1 2 4 8; do
  jmh_run "threads-$threads" -t "$threads" "$scaling"
done
unset opts
numpy
# The plain-Java check of the import figure, outside JMH.
run_java -cp "$jar" org.jdlpack.benchmarks.ImportLoop | tee "$results/importloop.txt"

python3 "$root/benchmarks/report.py" "$results" "$profile" "$root/docs"
if command -v gnuplot >/dev/null; then
  gnuplot "$results/plot.gp"
else
  echo "gnuplot not found (apt-get install gnuplot-nox): the pictures in docs/ were not redrawn" >&2
fi
