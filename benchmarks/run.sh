#!/usr/bin/env bash
# Runs the benchmark suite and writes docs/benchmarks.md and docs/benchmarks.png.
#
#   bash benchmarks/run.sh short    # about 6 minutes on 2 cores
#   bash benchmarks/run.sh full     # about 25 minutes: more forks and iterations
#
# Needs what the tests need (gcc, python3 with NumPy, a JDK >= 22) plus gnuplot for the plot.
set -euo pipefail
profile="${1:-short}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
java="${JDLPACK_JAVA:-$(ls -d /usr/lib/jvm/*25*/bin/java /usr/lib/jvm/*2[2-9]*/bin/java 2>/dev/null | head -1)}"
results="$root/benchmarks/target/results"
mkdir -p "$results"
export JDLPACK_BUILD_DIR="$root/benchmarks/target"

case "$profile" in
  short) jmh=(-f 1 -wi 3 -w 1 -i 5 -r 1) ;;
  full) jmh=(-f 3 -wi 5 -w 2 -i 10 -r 2) ;;
  *) echo "usage: $0 short|full" >&2; exit 2 ;;
esac

mvn -B -q -DskipTests install
jar="$root/benchmarks/target/benchmarks.jar"
"$java" -version 2>&1 | head -1 > "$results/jdk.txt"
"$java" --enable-native-access=ALL-UNNAMED -jar "$jar" "${jmh[@]}" -prof gc -rf json -rff "$results/jmh.json" \
  'ExchangeBenchmark|ZeroCopyBenchmark|CopyBenchmark' | tee "$results/jmh.txt"
"$java" --enable-native-access=ALL-UNNAMED -cp "$jar" org.jdlpack.benchmarks.NumPyRoundTrip | tee "$results/numpy.txt"
python3 "$root/benchmarks/report.py" "$results" "$profile" "$root/docs"
if command -v gnuplot >/dev/null; then
  gnuplot "$results/plot.gp"
else
  echo "gnuplot not found (apt-get install gnuplot-nox): docs/benchmarks.png not redrawn" >&2
fi
