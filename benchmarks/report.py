"""Turns the JMH and NumPy results of benchmarks/run.sh into docs/benchmarks.md and a gnuplot script."""
import json
import os
import platform
import sys
from datetime import date

results, profile, docs = sys.argv[1], sys.argv[2], sys.argv[3]
runs = json.load(open(os.path.join(results, "jmh.json")))
numpy = dict(line.split() for line in open(os.path.join(results, "numpy.txt")) if line.startswith("numpy_"))
jdk = open(os.path.join(results, "jdk.txt")).read().strip()


def key(run):
    name = run["benchmark"].rsplit(".", 2)
    params = run.get("params") or {}
    return name[-2] + "." + name[-1] + ("" if not params else "(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")")


score = {}
rows = []
for run in runs:
    metric = run["primaryMetric"]
    alloc = run.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score")
    k = key(run)
    score[k] = metric["score"]
    rows.append((k, metric["score"], metric["scoreError"], metric["scoreUnit"], alloc))


def s(name):
    return score.get(name, float("nan"))


# NumPy's faster variant is the bar: from_dlpack(a, copy=False) skips the copy negotiation.
numpy_ns = min(float(numpy.get("numpy_from_dlpack_ns", "nan")), float(numpy.get("numpy_from_dlpack_nocopy_ns", "nan")))
lines = []
add = lines.append
add("# Benchmarks")
add("")
add(f"Measured {date.today()} on this project's development machine: {platform.machine()}, {os.cpu_count()} cores, "
    f"Linux {platform.release()}; {jdk}; profile `{profile}`. Every ratio compares figures from the same run.")
add("")
add("Reproduce with `bash benchmarks/run.sh short` (about 6 minutes on 2 cores) or `bash benchmarks/run.sh full`;")
add("the script runs JMH (`-prof gc`), times NumPy's own round trip with `timeit` inside the embedded CPython, and")
add("rewrites this page and `docs/benchmarks.png`. On a machine this small the error bars are wide; read the ratios, not")
add("the third digit.")
add("")
add("![cost per exchange against tensor size; copy bandwidth against C](benchmarks.png)")
add("")
add("## Targets")
add("")
add("| target | measured | met |")
add("|---|---|---|")


def target(text, measured, ok):
    add(f"| {text} | {measured} | {'yes' if ok else '**no**'} |")


exp = s("ExchangeBenchmark.exportPointerVersionedCConsumes")
target("export + native import + deleter round trip at most NumPy's `np.from_dlpack` round trip",
       f"{exp:.0f} ns vs NumPy {numpy_ns:.0f} ns (ratio {exp / numpy_ns:.2f})", exp <= numpy_ns)
imp = s("ExchangeBenchmark.importCTensorAndClose")
imp_conf = s("ExchangeBenchmark.importCTensorIntoConfinedArena")
target("import + close of a native tensor at most 100 ns (default: own shared arena)", f"{imp:.0f} ns", imp <= 100)
target("import + close into a caller's confined arena at most 100 ns", f"{imp_conf:.0f} ns", imp_conf <= 100)
small, big = s("ZeroCopyBenchmark.importReadOneElementClose(bytes=1024)"), s("ZeroCopyBenchmark.importReadOneElementClose(bytes=1073741824)")
target("import + read + close within 10% between 1 KiB and 1 GiB (default)", f"{small:.0f} ns vs {big:.0f} ns ({(big / small - 1) * 100:+.1f}%)",
       abs(big / small - 1) <= 0.10)
small, big = (s("ZeroCopyBenchmark.importIntoConfinedArenaReadOneElement(bytes=1024)"),
              s("ZeroCopyBenchmark.importIntoConfinedArenaReadOneElement(bytes=1073741824)"))
target("import + read + close within 10% between 1 KiB and 1 GiB (confined arena)",
       f"{small:.0f} ns vs {big:.0f} ns ({(big / small - 1) * 100:+.1f}%)", abs(big / small - 1) <= 0.10)
for n in ("1024", "262144", "16777216"):
    j, c = s(f"CopyBenchmark.jdlpackContiguousToFloatArray(elements={n})"), s(f"CopyBenchmark.cMemcpyToFloatArray(elements={n})")
    target(f"contiguous copy of {int(n) * 4 // 1024} KiB to float[] at least 0.9 of C memcpy", f"{c / j:.2f}", c / j >= 0.9)
for n in ("1024", "262144", "16777216"):
    j, c = s(f"CopyBenchmark.jdlpackStridedToFloatArray(elements={n})"), s(f"CopyBenchmark.cStridedGatherToFloatArray(elements={n})")
    target(f"strided copy of {int(n) * 4 // 1024} KiB at least 0.5 of the C strided gather", f"{c / j:.2f}", c / j >= 0.5)
jni = s("ExchangeBenchmark.jniBaselineExportCConsumes")
target("FFM export round trip at least as fast as the JNI baseline", f"{exp:.0f} ns vs JNI {jni:.0f} ns (ratio {exp / jni:.2f})", exp <= jni)
alloc = {r[0]: r[4] for r in rows}
a = alloc.get("ExchangeBenchmark.exportPointerVersionedCConsumes")
target("Java heap allocated per exchange under 100 bytes (reported)", f"{a:.0f} B/op" if a is not None else "n/a",
       a is not None and a < 100)
add("")
add("## All figures")
add("")
add("| benchmark | score | error (99.9%) | unit | heap bytes/op |")
add("|---|---|---|---|---|")
for k, sc, err, unit, al in rows:
    add(f"| {k} | {sc:.3f} | {err:.3f} | {unit} | {'' if al is None else f'{al:.0f}'} |")
add(f"| NumPy `np.from_dlpack(a)` (timeit, best of 5) | {float(numpy.get('numpy_from_dlpack_ns', 'nan')):.1f} | | ns/op | |")
add(f"| NumPy `np.from_dlpack(a, copy=False)` (timeit, best of 5) | {float(numpy.get('numpy_from_dlpack_nocopy_ns', 'nan')):.1f} | | ns/op | |")
add("")
add("## Reading the figures")
add("")
add(open(os.path.join(os.path.dirname(__file__), "notes.md")).read().strip())
add("")
open(os.path.join(docs, "benchmarks.md"), "w").write("\n".join(lines))

# The plot: cost per exchange against size, and copy bandwidth against C.
with open(os.path.join(results, "zerocopy.dat"), "w") as f:
    for b in ("1024", "1048576", "1073741824"):
        f.write(f"{b} {s(f'ZeroCopyBenchmark.importReadOneElementClose(bytes={b})')} "
                f"{s(f'ZeroCopyBenchmark.importIntoConfinedArenaReadOneElement(bytes={b})')}\n")
with open(os.path.join(results, "copy.dat"), "w") as f:
    for n in ("1024", "262144", "16777216"):
        gb = lambda name: int(n) * 4 / (s(name) * 1e-6) / 1e9
        f.write(f"{int(n) * 4} {gb(f'CopyBenchmark.jdlpackContiguousToFloatArray(elements={n})')} "
                f"{gb(f'CopyBenchmark.cMemcpyToFloatArray(elements={n})')} "
                f"{gb(f'CopyBenchmark.jdlpackStridedToFloatArray(elements={n})')} "
                f"{gb(f'CopyBenchmark.cStridedGatherToFloatArray(elements={n})')}\n")
with open(os.path.join(results, "plot.gp"), "w") as f:
    f.write(f"""set terminal pngcairo size 1100,420 font "Sans,10"
set output "{os.path.join(docs, 'benchmarks.png')}"
set multiplot layout 1,2
set logscale x 2
set format x "%.0s%cB"
set grid
set key top left
set title "Import + read one element + close"
set xlabel "tensor size"
set ylabel "ns per exchange (log scale)"
set logscale y 10
set yrange [100:100000]
plot "{results}/zerocopy.dat" using 1:2 with linespoints title "own shared arena (default)", \\
     "" using 1:3 with linespoints title "caller's confined arena"
set title "Copy to float[]"
set xlabel "bytes copied"
set ylabel "GB/s"
unset logscale y
set yrange [0:*]
set key top right
plot "{results}/copy.dat" using 1:2 with linespoints title "jdlpack contiguous", \\
     "" using 1:3 with linespoints title "C memcpy", \\
     "" using 1:4 with linespoints title "jdlpack strided (every other row)", \\
     "" using 1:5 with linespoints title "C strided gather"
unset multiplot
""")
print("wrote", os.path.join(docs, "benchmarks.md"))
