"""Turns the JMH, NumPy and ImportLoop results of benchmarks/run.sh into docs/benchmarks.md and gnuplot scripts."""
import glob
import json
import os
import platform
import re
import statistics
import sys
from datetime import date

results, profile, docs = sys.argv[1], sys.argv[2], sys.argv[3]
jdk = open(os.path.join(results, "jdk.txt")).read().strip()


def key(run):
    name = run["benchmark"].rsplit(".", 2)
    params = run.get("params") or {}
    return name[-2] + "." + name[-1] + ("" if not params else "(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")")


def robust(run):
    """Median and minimum of the measurement iterations of all forks: on a shared machine one
    descheduled iteration moves JMH's mean by orders of magnitude, the median does not."""
    raw = [x for fork in run["primaryMetric"].get("rawData", []) for x in fork]
    if not raw:
        return run["primaryMetric"]["score"], run["primaryMetric"]["score"]
    return statistics.median(raw), min(raw)


def load(path):
    return json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) > 0 else []


# Single-thread figures: every group but the round-trip repeats and the thread runs.
score, alloc, rows = {}, {}, []
for path in sorted(glob.glob(os.path.join(results, "single-*.json"))):
    for run in load(path):
        metric = run["primaryMetric"]
        a = run.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score")
        k = key(run)
        median, low = robust(run)
        score[k], alloc[k] = median, a
        rows.append((k, median, low, metric["score"], metric["scoreError"], metric["scoreUnit"], a))


def s(name):
    return score.get(name, float("nan"))


# The export round trip, one fork per JMH process, interleaved with the NumPy processes.
forks = []
for path in glob.glob(os.path.join(results, "roundtrip-*.json")):
    for run in load(path):
        forks.append(robust(run)[0])
numpy = {}
for line in open(os.path.join(results, "numpy.txt")):
    m = re.match(r"process (\d+) (numpy_\S+) (\S+)", line)
    if m:
        numpy.setdefault(m.group(2), []).append(float(m.group(3)))
# Per process, NumPy's faster variant is the bar: from_dlpack(a, copy=False) skips the copy negotiation.
numpy_best = [min(a, b) for a, b in zip(numpy.get("numpy_from_dlpack_ns", []), numpy.get("numpy_from_dlpack_nocopy_ns", []))]

# Thread scaling: per-thread average time at 1, 2, 4 and 8 threads, measured one after the other
# (the 1-thread point of the single-thread groups is the fallback).
scaling_names = ["ExchangeBenchmark.exportPointerVersionedCConsumes", "LifetimeBenchmark.importDefaultReadClose",
                 "LifetimeBenchmark.importSharedReadClose", "ExchangeBenchmark.upcallFromJavaThread"]
per_thread = {n: {1: s(n)} for n in scaling_names}
for path in glob.glob(os.path.join(results, "threads-*.json")):
    for run in load(path):
        per_thread.setdefault(key(run), {})[run["threads"]] = robust(run)[0]


def speedup(name, threads):
    """Aggregate throughput at `threads` over single-thread throughput."""
    t = per_thread.get(name, {})
    return threads * t.get(1, float("nan")) / t.get(threads, float("nan"))


def slowdown(name, threads):
    t = per_thread.get(name, {})
    return t.get(threads, float("nan")) / t.get(1, float("nan"))


# The Python bridge: PythonHandOffBenchmark run python_rounds times, one process per benchmark each time.
python_runs = {}
for path in sorted(glob.glob(os.path.join(results, "python-*.json"))):
    for run in load(path):
        python_runs.setdefault(key(run).split(".", 1)[1], []).append(robust(run)[0])


def py_best(name):
    v = python_runs.get(name, [])
    return min(v) if v else float("nan")


def py_median(name):
    v = python_runs.get(name, [])
    return statistics.median(v) if v else float("nan")


def py_spread(name):
    v = python_runs.get(name, [])
    return f"{min(v):.0f} / {statistics.median(v):.0f}" if v else "n/a"


loop = {}
if os.path.exists(os.path.join(results, "importloop.txt")):
    for line in open(os.path.join(results, "importloop.txt")):
        m = re.match(r"(\S+) min (\S+) median (\S+)", line)
        if m:
            loop[m.group(1)] = (float(m.group(2)), float(m.group(3)))

lines = []
add = lines.append
add("# Benchmarks")
add("")
add(f"Measured {date.today()} on this project's development machine: {platform.machine()}, {os.cpu_count()} cores, "
    f"Linux {platform.release()}; {jdk}; profile `{profile}`. Every ratio compares figures from the same run.")
add("")
add("Reproduce with `bash benchmarks/run.sh short` (about 20 minutes on 2 cores) or `bash benchmarks/run.sh full`;")
add("the script runs JMH (`-prof gc`) group by group, each group in fresh JVMs, times NumPy's own round trip with")
add("`timeit` inside the embedded CPython in fresh JVM processes between the groups, runs the Python bridge's group")
add("several times (each benchmark in a fresh JVM every time), runs a plain-Java import loop")
add("(`ImportLoop`) as an independent check, and rewrites this page and the two pictures. On a machine this small,")
add("shared with other work, the error bars are wide: read the ratios, not the third digit.")
add("")
add("![cost per exchange against tensor size; copy bandwidth against C](benchmarks.png)")
add("")
add("![throughput against threads: export round trip, default import, shared-arena import, upcall-only control](benchmarks-threads.png)")
add("")
add("## Targets")
add("")
add("| target | measured | met |")
add("|---|---|---|")


def target(text, measured, ok):
    add(f"| {text} | {measured} | {'yes' if ok else '**no**'} |")


def fmt_alloc(a):
    return "n/a" if a is None else f"{a:.0f} B/op"


imp = s("LifetimeBenchmark.importDefaultReadClose")
target("default import + read one element + close at most 60 ns on one thread", f"{imp:.0f} ns", imp <= 60)
a = alloc.get("LifetimeBenchmark.importDefaultReadClose")
target("default import + read + close at most 64 B of heap per op", fmt_alloc(a), a is not None and a <= 64)
a = alloc.get("LifetimeBenchmark.importScopedRead")
scoped = s('LifetimeBenchmark.importScopedRead')
target("scoped import (`ImportedTensor.apply`) + read at most 45 ns and 0 B of heap per op",
       f"{scoped:.0f} ns, {fmt_alloc(a)}", a is not None and a < 1 and scoped <= 45)
shared = s("LifetimeBenchmark.importSharedReadClose")
target("no JVM-wide handshake per tensor on the default path (default vs. shared arena per tensor)",
       f"{imp:.0f} ns vs {shared:.0f} ns ({shared / imp:.0f}x)", shared / imp > 10)
if forks and numpy_best:
    best, nbest = min(forks), min(numpy_best)
    target("export round trip at most 0.45x NumPy's `np.from_dlpack` round trip (best fork vs best NumPy process)",
           f"{best:.0f} ns vs NumPy {nbest:.0f} ns (ratio {best / nbest:.2f}); forks {min(forks):.0f} to {max(forks):.0f} ns, "
           f"median {statistics.median(forks):.0f}; NumPy processes {min(numpy_best):.0f} to {max(numpy_best):.0f} ns, "
           f"median {statistics.median(numpy_best):.0f}", best / nbest <= 0.45)
exp = s("ExchangeBenchmark.exportPointerVersionedCConsumes")
jni = s("ExchangeBenchmark.jniBaselineExportCConsumes")
target("FFM export round trip faster than the JNI baseline", f"{exp:.0f} ns vs JNI {jni:.0f} ns (ratio {exp / jni:.2f})", exp < jni)
for name, label in (("ExchangeBenchmark.exportPointerVersionedCConsumes", "export round trip"),
                    ("LifetimeBenchmark.importDefaultReadClose", "default import + close")):
    control = speedup("ExchangeBenchmark.upcallFromJavaThread", 2)
    target(f"{label}: aggregate throughput at 2 threads at least 1.6x one thread",
           f"{speedup(name, 2):.2f}x (control, upcalls only: {control:.2f}x)", speedup(name, 2) >= 1.6)
for name, label in (("ExchangeBenchmark.exportPointerVersionedCConsumes", "export round trip"),
                    ("LifetimeBenchmark.importDefaultReadClose", "default import + close")):
    target(f"{label}: per-op time at 8 threads at most 5x one thread",
           f"{slowdown(name, 8):.2f}x (control: {slowdown('ExchangeBenchmark.upcallFromJavaThread', 8):.2f}x)",
           slowdown(name, 8) <= 5)
small, big = (s("ZeroCopyBenchmark.importReadOneElementClose(bytes=1024)"),
              s("ZeroCopyBenchmark.importReadOneElementClose(bytes=1073741824)"))
target("import + read + close within 10% between 1 KiB and 1 GiB (default lifetime)",
       f"{small:.0f} ns vs {big:.0f} ns ({(big / small - 1) * 100:+.1f}%)", abs(big / small - 1) <= 0.10)
for n in ("1024", "262144", "16777216"):
    j, c = s(f"CopyBenchmark.jdlpackContiguousToFloatArray(elements={n})"), s(f"CopyBenchmark.cMemcpyToFloatArray(elements={n})")
    target(f"contiguous copy of {int(n) * 4 // 1024} KiB to float[] at least 0.9 of C memcpy", f"{c / j:.2f}", c / j >= 0.9)
for n in ("1024", "262144", "16777216"):
    j, c = s(f"CopyBenchmark.jdlpackStridedToFloatArray(elements={n})"), s(f"CopyBenchmark.cStridedGatherToFloatArray(elements={n})")
    target(f"strided copy of {int(n) * 4 // 1024} KiB at least 0.5 of the C strided gather", f"{c / j:.2f}", c / j >= 0.5)
a = alloc.get("ExchangeBenchmark.exportPointerVersionedCConsumes")
target("Java heap per export round trip at most 40 B (aim: 0)", fmt_alloc(a), a is not None and round(a) <= 40)
if python_runs:
    rounds = len(python_runs.get("inPythonNumPyArray", []))
    j, n = py_best("inPythonJavaTensor"), py_best("inPythonNumPyArray")
    target(f"`np.from_dlpack(javaTensor)` in a Python loop at most 1.3x `np.from_dlpack(ndarray)` (best of {rounds} processes each)",
           f"{j:.0f} ns vs {n:.0f} ns ({j / n:.2f}x; medians {py_median('inPythonJavaTensor'):.0f} vs "
           f"{py_median('inPythonNumPyArray'):.0f} ns, {py_median('inPythonJavaTensor') / py_median('inPythonNumPyArray'):.2f}x)",
           j / n <= 1.3)
    e, d = py_best("cConsumerExchange"), py_best("cConsumerDlpack")
    target("a Java tensor taken by the C consumer through the exchange API at most 120 ns per tensor",
           f"{e:.0f} ns (median {py_median('cConsumerExchange'):.0f}); the same consumer through `__dlpack__` {d:.0f} ns "
           f"({e / d:.2f}x); a `dltensor_from_py_object_no_sync` view {py_best('cConsumerView'):.0f} ns", e <= 120)
    for name, label in (("importJavaTensor", "a Java tensor"), ("importCProducer", "the C producer type's tensor")):
        x, y = py_best(name), py_best(name + "ThroughDlpack")
        target(f"`PythonRuntime.importTensor` of {label} through the exchange API at most half the same import through `__dlpack__`",
               f"{x:.0f} ns vs {y:.0f} ns ({x / y:.2f}x; medians {py_median(name):.0f} vs {py_median(name + 'ThroughDlpack'):.0f} ns)",
               x / y <= 0.5)
add("")
if loop:
    add("## The same import outside JMH")
    add("")
    add("`java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar org.jdlpack.benchmarks.ImportLoop`")
    add("imports the same C tensor through the public front door in a plain loop (11 rounds of a million):")
    add("")
    add("| path | best round | median round | JMH median on this page |")
    add("|---|---|---|---|")
    for k, label, jmh_name in (("import_loop_default_ns", "`ImportedTensor.of` + read + close", "LifetimeBenchmark.importDefaultReadClose"),
                               ("import_loop_scoped_ns", "`ImportedTensor.apply` + read", "LifetimeBenchmark.importScopedRead")):
        if k in loop:
            add(f"| {label} | {loop[k][0]:.0f} ns/op | {loop[k][1]:.0f} ns/op | {s(jmh_name):.0f} ns/op |")
    add("")
add("## Thread scaling")
add("")
add("Per-thread average time per operation (ns) with 1, 2, 4 and 8 JMH threads; the machine has "
    f"{os.cpu_count()} cores, so 4 and 8 threads are oversubscribed. `upcallFromJavaThread` shares nothing and shows what the machine can do.")
add("")
add("| benchmark | 1 | 2 | 4 | 8 | throughput at 2 threads vs 1 | per-op time at 8 vs 1 |")
add("|---|---|---|---|---|---|---|")
for n in scaling_names:
    t = per_thread.get(n, {})
    add(f"| {n} | " + " | ".join(f"{t.get(k, float('nan')):.0f}" for k in (1, 2, 4, 8))
        + f" | {speedup(n, 2):.2f}x | {slowdown(n, 8):.2f}x |")
add("")
if python_runs:
    rounds = len(python_runs.get("inPythonNumPyArray", []))
    add("## The Python bridge")
    add("")
    add("`PythonHandOffBenchmark`, run " + str(rounds) + " times by `run.sh`, each benchmark in a fresh JVM every time: the best and the")
    add("median process (ns per call, per tensor for the C consumer). The Java tensor object is `_jdlpack.JavaTensor`, a C-level type")
    add("whose `__dlpack__` is one upcall; the C consumer is test-support's `exchange_peer.c`, loaded with ctypes. This group alone:")
    add("`java --enable-native-access=ALL-UNNAMED -jar benchmarks/target/benchmarks.jar PythonHandOffBenchmark -f 1`, repeated.")
    add("")
    add("| what | NumPy array | Java tensor object | ratio (best) |")
    add("|---|---|---|---|")
    for name, label in (("inPython", "`np.from_dlpack(x)` in a Python loop"), ("fromJava", "`np.from_dlpack(x)` called from Java (GIL per call)")):
        a, b = py_best(name + "NumPyArray"), py_best(name + "JavaTensor")
        add(f"| {label} | {py_spread(name + 'NumPyArray')} ns | {py_spread(name + 'JavaTensor')} ns | {b / a:.2f}x |")
    add(f"| the same from Java, a new Java tensor object each time | | {py_spread('fromJavaNewObject')} ns | |")
    add("")
    add("| consumer of a Java tensor | best / median |")
    add("|---|---|")
    add(f"| C consumer, exchange API: `managed_tensor_from_py_object_no_sync`, the deleter | {py_spread('cConsumerExchange')} ns |")
    add(f"| C consumer, exchange API: `dltensor_from_py_object_no_sync` (a view, no export) | {py_spread('cConsumerView')} ns |")
    add(f"| the same C consumer through `__dlpack__(max_version=(1, 3))` | {py_spread('cConsumerDlpack')} ns |")
    add("")
    add("| `PythonRuntime.importTensor` + close, from Java | through the exchange API | through `__dlpack__` | ratio (best) |")
    add("|---|---|---|---|")
    for name, label in (("importJavaTensor", "a Java tensor object"), ("importCProducer", "the C producer type (exchange_peer.c)")):
        add(f"| {label} | {py_spread(name)} ns | {py_spread(name + 'ThroughDlpack')} ns | {py_best(name) / py_best(name + 'ThroughDlpack'):.2f}x |")
    add(f"| a NumPy array (no exchange API) | | {py_spread('importNumPyArray')} ns | |")
    add("")
arrow = {n: (s(f"ArrowHandoffBenchmark.{n}(rows=1000000)"), alloc.get(f"ArrowHandoffBenchmark.{n}(rows=1000000)"))
         for n in ("jdlpackZeroCopy", "copyToFloatArray", "copyThroughFloatArrayToATensor")}
if any(v[0] == v[0] for v in arrow.values()):
    add("## An Arrow embedding column handed to a native consumer")
    add("")
    add("A `FixedSizeList<float32>[768]` column of 1,000,000 rows (3 GB) handed to the C peer: through dlpack-arrow")
    add("without a copy, against copying it into a `float[]` first (as code without DLPack does). The zero-copy time is")
    add("the null check (a scan of the validity bitmap) plus one export and one deleter call.")
    add("")
    add("| handoff | time per handoff | heap bytes per handoff | vs zero-copy |")
    add("|---|---|---|---|")
    base = arrow["jdlpackZeroCopy"][0]
    labels = {"jdlpackZeroCopy": "jdlpack, zero-copy", "copyToFloatArray": "copy into `float[]`, C reads it in place",
              "copyThroughFloatArrayToATensor": "copy into `float[]`, then into a native tensor"}
    for n, (t, a) in arrow.items():
        add(f"| {labels[n]} | {t:.1f} ms | {fmt_alloc(a)} | {t / base:.0f}x |")
    add("")
add("## All single-thread figures")
add("")
add("The score used everywhere on this page is the median of the measurement iterations; JMH's mean and error are shown")
add("beside it, because on a shared machine one descheduled iteration can move the mean by orders of magnitude.")
add("")
add("| benchmark | median | min | JMH mean | error (99.9%) | unit | heap bytes/op |")
add("|---|---|---|---|---|---|---|")
for k, med, low, sc, err, unit, al in rows:
    add(f"| {k} | {med:.3f} | {low:.3f} | {sc:.3f} | {err:.3f} | {unit} | {'' if al is None else f'{al:.0f}'} |")
for name, v in sorted(python_runs.items()):
    add(f"| PythonHandOffBenchmark.{name}, {len(v)} processes: min / median / max | "
        f"{min(v):.1f} / {statistics.median(v):.1f} / {max(v):.1f} | | | | ns/op | |")
for name in ("numpy_from_dlpack_ns", "numpy_from_dlpack_nocopy_ns"):
    v = numpy.get(name, [])
    if v:
        label = "np.from_dlpack(a)" if name == "numpy_from_dlpack_ns" else "np.from_dlpack(a, copy=False)"
        add(f"| NumPy `{label}`, {len(v)} processes (timeit, best of 5 each): min / median / max | "
            f"{min(v):.1f} / {statistics.median(v):.1f} / {max(v):.1f} | | | | ns/op | |")
if forks:
    add(f"| ExchangeBenchmark.exportPointerVersionedCConsumes, {len(forks)} forks: min / median / max | "
        f"{min(forks):.1f} / {statistics.median(forks):.1f} / {max(forks):.1f} | | | | ns/op | |")
add("")
add("## Reading the figures")
add("")
add(open(os.path.join(os.path.dirname(__file__), "notes.md")).read().strip())
add("")
# Two sections survive this rewrite: the figures the guides link to (each made by its own command,
# written by hand) and the server section (benchmarks/server/report.py writes it, from `run.sh server`).
page = os.path.join(docs, "benchmarks.md")
old = open(page).read() if os.path.exists(page) else ""
for kept in ("guide-figures", "server-load"):
    begin, end = f"<!-- {kept}:begin -->", f"<!-- {kept}:end -->"
    if begin in old and end in old:
        lines += ["", old[old.index(begin): old.index(end) + len(end)]]
open(page, "w").write("\n".join(lines))

# The pictures: cost per import against size and copy bandwidth; throughput against threads.
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
with open(os.path.join(results, "threads.dat"), "w") as f:
    for k in (1, 2, 4, 8):
        # aggregate millions of operations per second over all threads
        f.write(f"{k} " + " ".join(f"{k / per_thread.get(n, {}).get(k, float('nan')) * 1e3:.6g}" for n in scaling_names) + "\n")
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
set ylabel "ns per import (log scale)"
set logscale y 10
set yrange [10:100000]
plot "{results}/zerocopy.dat" using 1:2 with linespoints title "default (confined) lifetime", \\
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
set terminal pngcairo size 760,540 font "Sans,10"
set output "{os.path.join(docs, 'benchmarks-threads.png')}"
unset logscale
set logscale x 2
set logscale y 10
set format x "%g"
set format y "%g"
set xtics (1, 2, 4, 8)
set xrange [0.8:10]
set yrange [*:*]
set key below
set title "Aggregate throughput against threads ({os.cpu_count()} cores)"
set xlabel "JMH threads"
set ylabel "million operations per second, all threads (log scale)"
plot "{results}/threads.dat" using 1:2 with linespoints title "export round trip (exportPointer + C + deleter)", \\
     "" using 1:3 with linespoints title "import + read + close, default (confined)", \\
     "" using 1:4 with linespoints title "import + read + close, shared arena per tensor", \\
     "" using 1:5 with linespoints title "control: upcall only, no shared state"
""")
print("wrote", os.path.join(docs, "benchmarks.md"))
