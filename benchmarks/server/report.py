#!/usr/bin/env python3
"""Turns benchmarks/server/load.sh's results into the section "The inference server under load" of
docs/benchmarks.md (between its markers; the rest of the page is left as it is) and a gnuplot script
for docs/benchmarks-server.png (requests/s and p99 against connections, 4 KiB and 4 MiB).

    python3 report.py RESULTS DOCS        # after load.sh
    python3 report.py --placeholder DOCS  # the section's skeleton, every figure "pending"

A short run (under 10 s per configuration or under 3 rounds, made to check the script) leaves docs/
alone: its section, table and plot go to RESULTS (server-section.md,
benchmarks-server.png), so that no figure of a short run reaches a page. Every figure is the median over the rounds of load.sh (each round a fresh server process); the
per-configuration table gives the smallest and largest round too.
"""
import csv, glob, os, re, statistics, sys

placeholder = sys.argv[1] == "--placeholder"
results, docs = (None, sys.argv[2]) if placeholder else (sys.argv[1], sys.argv[2])
BEGIN, END = "<!-- server-load:begin -->", "<!-- server-load:end -->"


def read(name, default=""):
    if results is None:
        return default
    path = os.path.join(results, name)
    return open(path).read().strip() if os.path.exists(path) else default


def stat(text, key):
    m = re.search(r"(?:^|[ \[,])" + key + r"=(\d+)", text)
    return int(m.group(1)) if m else None


cores = read("cores.txt", str(os.cpu_count()) if placeholder else "?")
seconds, endurance, rounds = (int(v) for v in read("durations.txt", "10 300 3").split())
ORDER = ["jdlpack", "jdlpack-ortjava", "jdlpack-numpy", "ort-java-expert", "ort-java-tutorial", "node-1", "node-N", "fastapi-1", "fastapi-N"]
LABELS = {
    "jdlpack": "jdlpack, default route (`POST /classify`), ONNX Runtime's C API",
    "jdlpack-ortjava": "jdlpack, default route on ONNX Runtime Java (`-Dserver.ort=java`)",
    "jdlpack-numpy": "jdlpack, NumPy route (`POST /classify?route=numpy`)",
    "ort-java-expert": "ONNX Runtime Java by hand: pooled direct buffers, pinned outputs",
    "ort-java-tutorial": "ONNX Runtime Java the tutorial way: `byte[]`, `float[]`, `float[][]`",
    "node-1": "Node + onnxruntime-node, one process",
    "node-N": f"Node + onnxruntime-node, {cores} workers (`node:cluster`)",
    "fastapi-1": "FastAPI + uvicorn + onnxruntime + NumPy, one worker",
    "fastapi-N": f"FastAPI + uvicorn + onnxruntime + NumPy, {cores} workers",
}
PAYLOADS = {"4k": "4 KiB", "4m": "4 MiB"}

rows = [] if placeholder else list(csv.DictReader(open(os.path.join(results, "load.tsv")), delimiter="\t"))
samples = {}
for r in rows:
    samples.setdefault((r["server"], r["payload"], int(r["connections"])), []).append(r)
servers = ORDER if placeholder else [s for s in ORDER if any(k[0] == s for k in samples)] + sorted({k[0] for k in samples} - set(ORDER))
connections = [1, 8, 64] if placeholder else sorted({k[2] for k in samples})


def median(server, payload, c, column):
    values = [float(r[column]) for r in samples.get((server, payload, c), []) if r[column] not in ("", "-")]
    return statistics.median(values) if values else None


def spread(server, payload, c, column):
    values = [float(r[column]) for r in samples.get((server, payload, c), []) if r[column] not in ("", "-")]
    return (min(values), max(values)) if values else (None, None)


def fmt(v, digits=0):
    if v is None:
        return "pending" if placeholder else ""
    return f"{v:,.{digits}f}"


header_cells = [f"{PAYLOADS[p]}, {c} conn." for p in PAYLOADS for c in connections]


def table(column, digits, only=None):
    out = ["| server | " + " | ".join(header_cells) + " |", "|---|" + "---:|" * len(header_cells)]
    for s in servers:
        if only and not only(s):
            continue
        out.append(f"| {LABELS.get(s, s)} | " + " | ".join(fmt(median(s, p, c, column), digits) for p in PAYLOADS for c in connections) + " |")
    return out


def ratio(a, b, p, c):
    x, y = median(a, p, c, "rps"), median(b, p, c, "rps")
    return x / y if x is not None and y else None


short = not placeholder and (seconds < 10 or rounds < 3)
lines = [BEGIN, "## The inference server under load", ""]
if placeholder:
    lines += ["**Figures pending: `bash benchmarks/run.sh server` (10 s per configuration, 3 rounds, about an hour on 2 cores) "
              "rewrites this section, its tables, the plot and the table in the ONNX Runtime guide. Until then nothing here is "
              "measured; the list-based \"copying route\" of earlier versions of this page was no fair baseline and is gone "
              "(see benchmarks/notes.md, \"The inference server against its peers\").**", ""]
if short:
    lines += [f"**A short run ({seconds} s per configuration, {rounds} round(s)), made to check the script: its figures are "
              "not for claims. The figures to quote come from `bash benchmarks/run.sh server` with its defaults "
              "(10 s per configuration, 3 rounds) on a quiet machine.**", ""]
lines += [
    f"The example server and the servers a user would write instead, on the same machine ({cores} cores, {read('jdk.txt', 'the JDK that run.sh finds')}), "
    "each answering the same HTTP contract ([the example server](serving.md#the-example-server)) with the same model "
    "(`scorer.onnx`) and ONNX Runtime options (one intra-op and one inter-op thread per session), driven by the same "
    f"[wrk](https://github.com/wg/wrk) script (`benchmarks/server/post.lua`): {seconds} s per configuration after a warm-up, "
    f"one configuration after another, {rounds} round(s), each round a fresh process of every server; the figures are the medians. "
    "Before any load `benchmarks/server/check.py` posts the load bodies and the bad requests to every peer and to the example "
    "server and compares status codes and answers. After each wrk run the next waits until the server's processes are idle. "
    "A request is 64 rows (4 KiB) or 65,536 rows (4 MiB) of 16 float32. wrk runs on the same cores as the servers. "
    "Reproduce with `bash benchmarks/run.sh server [SECONDS] [ENDURANCE_SECONDS]` (defaults 10 and 300; `ROUNDS=3`).",
    "",
    "The peers (`benchmarks/server/peers`): the two ONNX Runtime Java servers use the example server's HTTP server (the JDK's "
    "`HttpServer` on virtual threads), executor, ONNX Runtime options and at most one run per core; the expert one reads the body "
    "into a pooled direct `ByteBuffer` that `OnnxTensor.createTensor` wraps, writes the logits into a pinned output, and does "
    "normalization, the NaN check, softmax and top-2 in Java loops over those buffers; the tutorial one uses `byte[]`, `float[]`, "
    "`FloatBuffer.wrap` and `float[][]`. Node runs `node:http` and onnxruntime-node, FastAPI runs on uvicorn (uvloop, httptools) "
    "with TCP_NODELAY on the listener.",
    "",
]
versions = read("versions.txt")
if versions:
    lines += ["Versions: " + "; ".join(sorted(set(versions.splitlines()))) + ".", ""]
skipped = read("skipped.txt")
if skipped:
    lines += ["Not measured in this run:", ""] + [f"- {l}" for l in skipped.splitlines()] + [""]
checks = [] if placeholder else [read(os.path.basename(p)).splitlines()[-1] for p in sorted(glob.glob(os.path.join(results, "check-*.txt")))]
if checks:
    lines += ["The checks before the load: " + "; ".join(f"`{c}`" for c in checks) + ".", ""]

lines += ([] if placeholder else ["![requests/s and p99 latency against connections, 4 KiB and 4 MiB](benchmarks-server.png)", ""]) + [
          f"Requests/s (median of {rounds}):", ""] + table("rps", 0)
lines += ["", "p99 latency, ms (median):", ""] + table("p99_ms", 2)
lines += ["", "Heap allocated per request, bytes (median; the JVM servers only: the growth of "
          "`ThreadMXBean.getTotalThreadAllocatedBytes()` over the run, all threads, divided by the requests served, "
          "read from each server's `GET /stats`):", ""]
lines += table("heap_bytes_per_request", 0, only=lambda s: s.startswith(("jdlpack", "ort-java")))

# Which is fastest where.
lines += ["", "Fastest per configuration (median requests/s):", ""] + (["- pending"] if placeholder else [])
for p in PAYLOADS:
    for c in connections:
        ranked = sorted(((median(s, p, c, "rps") or 0, s) for s in servers), reverse=True)
        if ranked and ranked[0][0] > 0:
            best = ranked[0]
            second = ranked[1] if len(ranked) > 1 else None
            lines.append(f"- {PAYLOADS[p]}, {c} connection(s): {LABELS.get(best[1], best[1])}, {best[0]:,.0f}/s"
                         + (f", {best[0] / second[0]:.2f}x the next ({LABELS.get(second[1], second[1])})" if second and second[0] > 0 else ""))

# What the embedded interpreter costs: the NumPy route against the default route of the same server.
gil = []
for p in PAYLOADS:
    for c in connections:
        r = ratio("jdlpack-numpy", "jdlpack", p, c)
        if r is not None:
            gil.append(f"{PAYLOADS[p]}, {c} conn.: {r:.2f}x")
if placeholder:
    gil = ["pending"]
if gil:
    lines += ["", "What the embedded NumPy steps cost: the NumPy route's requests/s over the default route's, both in the example "
              "server (one CPython interpreter for the whole JVM, so Python steps run one at a time under its GIL while the "
              "default route's Java steps run on every core): " + "; ".join(gil) + "."]
fast = []
for p in PAYLOADS:
    for c in connections:
        r = ratio("jdlpack-numpy", "fastapi-N", p, c)
        if r is not None:
            fast.append(f"{PAYLOADS[p]}, {c} conn.: {r:.2f}x")
if placeholder:
    fast = ["pending"]
if fast:
    lines += ["", f"The NumPy route against the FastAPI service with {cores} workers (one interpreter per process, so no shared GIL): "
              + "; ".join(fast) + "."]
lines += ["", "What differs per request, from the code: the tutorial peer holds the body twice on the heap (`byte[]`, "
          "`float[]`), ONNX Runtime copies it into native memory and the logits come back as `float[][]`; the expert peer copies the "
          "body once, from the socket's chunks into a pooled direct buffer, and allocates no buffer per request; Node reads the "
          "body into one `Buffer` and runs JavaScript loops, FastAPI one NumPy expression per step; the Node and FastAPI servers "
          "with one worker per core are that many processes, each with its own session."]

if not placeholder:
    lines += ["", "<details><summary>Every configuration: median, smallest and largest round</summary>", "",
              "| server | payload | conn. | requests/s | (min - max) | p50 ms | p99 ms | heap B/request | non-2xx | errors |",
              "|---|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for s in servers:
        for p in PAYLOADS:
            for c in connections:
                if (s, p, c) not in samples:
                    continue
                lo, hi = spread(s, p, c, "rps")
                non2xx = sum(int(r["non2xx"] or 0) for r in samples[(s, p, c)])
                errors = sum(int(r["errors"] or 0) for r in samples[(s, p, c)])
                lines.append(f"| {s} | {PAYLOADS[p]} | {c} | {fmt(median(s, p, c, 'rps'))} | {fmt(lo)} - {fmt(hi)} | "
                             f"{fmt(median(s, p, c, 'p50_ms'), 2)} | {fmt(median(s, p, c, 'p99_ms'), 2)} | "
                             f"{fmt(median(s, p, c, 'heap_bytes_per_request')) or '-'} | {non2xx} | {errors} |")
    lines += ["", "</details>", ""]
else:
    lines += [""]
loads = [float(r["load1"]) for r in rows if r.get("load1")]
if loads:
    lines += [f"The machine's one-minute load average at the start of the wrk runs: {min(loads):.1f} to {max(loads):.1f} "
              f"(median {statistics.median(loads):.1f}) on {cores} cores.", ""]
non2xx = sum(int(r["non2xx"] or 0) for r in rows)
errors = sum(int(r["errors"] or 0) for r in rows)
if not placeholder:
    lines += [f"Across the load runs wrk saw {non2xx} non-2xx answers and {errors} socket errors or timeouts.", ""]

# Issue 32's targets, from the medians.
targets = []


for p in PAYLOADS:
    for c in (8, 64):
        r = ratio("jdlpack", "ort-java-expert", p, c)
        name = f"default route at least 1.0x ONNX Runtime Java by hand, {PAYLOADS[p]}, {c} connections"
        targets.append((name, f"{r:.2f}x", r >= 1.0) if r is not None else (name, "not measured in this run", False))
heaps = [(median("jdlpack", p, c, "heap_bytes_per_request"), median("ort-java-expert", p, c, "heap_bytes_per_request"))
         for p in PAYLOADS for c in (8, 64)]
heaps = [(a, b) for a, b in heaps if a is not None and b]
if not heaps:
    targets.append(("default route's heap per request at most 0.5x the hand-written peer's", "not measured in this run", False))
else:
    worst = max(a / b for a, b in heaps)
    targets.append(("default route's heap per request at most 0.5x the hand-written peer's (8 and 64 connections, both sizes)",
                    ", ".join(f"{a:,.0f} B vs {b:,.0f} B" for a, b in heaps) + f" (at most {worst:.2f}x)", worst <= 0.5))
# Issue 44's: the default route on the C API at least 1.1x the hand-written peer, p99 no worse.
for p in PAYLOADS:
    for c in (8, 64):
        r = ratio("jdlpack", "ort-java-expert", p, c)
        a, b = median("jdlpack", p, c, "p99_ms"), median("ort-java-expert", p, c, "p99_ms")
        name = f"default route at least 1.1x ONNX Runtime Java by hand with p99 no worse, {PAYLOADS[p]}, {c} connections"
        targets.append((name, f"{r:.2f}x, p99 {a:.2f} against {b:.2f} ms", r >= 1.1 and a <= b) if r is not None and a is not None
                       and b is not None else (name, "not measured in this run", False))
for p, want in (("4k", 1.5), ("4m", 1.3)):
    for c in (8, 64):
        r = ratio("jdlpack-numpy", "fastapi-N", p, c)
        name = f"NumPy route at least {want}x FastAPI with {cores} workers, {PAYLOADS[p]}, {c} connections"
        targets.append((name, f"{r:.2f}x", r >= want) if r is not None else (name, "not measured in this run", False))

# Endurance, per jdlpack route.
for server in read("endurance-routes.txt").split():
    rss = [l.split("\t") for l in read(f"endurance-rss-{server}.tsv").splitlines() if l.strip()]
    end_stats = read(f"endurance-stats-{server}.txt")
    line = next((l for l in read(f"endurance-{server}.txt").splitlines() if l.startswith("RESULT")), "")
    e = dict(kv.split("=") for kv in line.split()[1:]) if line else {}
    disconnects = next((l for l in read(f"disconnects-{server}.txt").splitlines() if l.startswith("RESULT")), "RESULT disconnects=0")
    lines += [f"### Endurance: {LABELS[server]}", "",
              f"{endurance} s at 64 connections, 4 KiB requests, 1 in 100 with a wrong `X-Shape` (answered 400), a fresh server JVM "
              "with a 512 MiB heap touched in full at start (`-XX:+AlwaysPreTouch`, so RSS growth is native memory), and clients "
              f"that send half a body and hang up, five a second ({disconnects.split('=')[1]} of them). wrk: "
              f"{float(e.get('rps', 0)):,.0f} requests/s, p50 {float(e.get('p50_ms', 0)):.2f} ms, p99 {float(e.get('p99_ms', 0)):.2f} ms, "
              f"{e.get('non2xx', '?')} non-2xx, {e.get('errors', '?')} socket errors.", "",
              "| time | RSS |", "|---:|---:|"]
    lines += [f"| {t} s | {int(kib) / 1024:.0f} MiB |" for t, kib in rss]
    lines += ["", f"The server's counters after the run: `{end_stats}`", ""]
    if len(rss) >= 2:
        first, last = int(rss[0][1]), int(rss[-1][1])
        growth = (last - first) / first if first else 0
        targets.append((f"{server} endurance: RSS growth from the first fifth to the end under 10%",
                        f"{first / 1024:.0f} MiB at {rss[0][0]} s, {last / 1024:.0f} MiB at {rss[-1][0]} s ({growth:+.1%})", growth < 0.10))
    # The idle scoring slots keep three tensors each (held by their ONNX Runtime input's and output's retains,
    # which are no exports): live, not leaked.
    kept = 3 * (stat(end_stats, "idleSlots") or 0)
    live = (stat(end_stats, "liveExports"), stat(end_stats, "liveExportOwners"), stat(end_stats, "ownedManagedTensors"),
            stat(end_stats, "leaksReported"))
    targets.append((f"{server} endurance: after the run no live export, no tensor but the idle scoring slots' ({kept}), "
                    "0 owned tensors, 0 leaks", ", ".join(map(str, live)), live == (0, kept, 0, 0)))
    targets.append((f"{server} endurance: 0 server errors (5xx)", str(stat(end_stats, "serverError")), stat(end_stats, "serverError") == 0))

if placeholder:
    targets = [(t, "pending", None) for t in (
        "default route at least 1.0x ONNX Runtime Java by hand, 4 KiB and 4 MiB, 8 and 64 connections",
        "default route at least 1.1x ONNX Runtime Java by hand with p99 no worse, 4 KiB and 4 MiB, 8 and 64 connections",
        "default route's heap per request at most 0.5x the hand-written peer's (8 and 64 connections, both sizes)",
        f"NumPy route at least 1.5x FastAPI with {cores} workers at 4 KiB, 1.3x at 4 MiB (8 and 64 connections)",
        "endurance on each jdlpack route (300 s, 64 connections, 1% bad requests, hang-ups): RSS growth under 10%, "
        "0 leaks after, 0 server errors")]
lines += ["### Targets (issues 32 and 44)", "", "| target | measured | met |", "|---|---|---|"]
lines += [f"| {t} | {m} | {'pending' if ok is None else 'yes' if ok else '**no**'} |" for t, m, ok in targets]
if short:
    lines += ["", "(A short run: these rows check the report, they are not the verdict.)"]
lines += ["", END]
section = "\n".join(lines)

# A short run writes beside its results, never into docs/.
out = results if short else docs
if short:
    open(os.path.join(results, "server-section.md"), "w").write(section + "\n")
page = os.path.join(docs, "benchmarks.md")
text = open(page).read() if os.path.exists(page) else "# Benchmarks\n"
if BEGIN in text and END in text:
    text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END):]
else:
    text = text.rstrip("\n") + "\n\n" + section + "\n"
if not text.endswith("\n"):
    text += "\n"
if not short:
    open(page, "w").write(text)

if placeholder:
    print("wrote the placeholder server section of", page)
    sys.exit(0)

# The plot: one line per server, the same colour in all four panels.
data = os.path.join(results, "server-plot.dat")
blocks = []
with open(data, "w") as f:
    for p in PAYLOADS:
        for s in servers:
            f.write(f"# {p} {s}\n")
            for c in connections:
                rps, p99 = median(s, p, c, "rps"), median(s, p, c, "p99_ms")
                if rps:
                    f.write(f"{c} {rps} {p99}\n")
            f.write("\n\n")
            blocks.append((p, s))


def plot(payload, column):
    parts = []
    for index, (p, s) in enumerate(blocks):
        if p == payload:
            width = 3 if s.startswith("jdlpack") else 1  # the example server's routes stand out
            parts.append(f'data index {index} using 1:{column} with linespoints lt {(ORDER.index(s) if s in ORDER else len(ORDER) + servers.index(s)) + 1} lw {width} title "{s}"')
    return "plot " + ", \\\n     ".join(parts)


with open(os.path.join(results, "server-plot.gp"), "w") as f:
    f.write(f"""set terminal pngcairo size 1200,900 font "Sans,10"
set output "{os.path.join(out, 'benchmarks-server.png')}"
set multiplot layout 2,2 title "{'SHORT RUN, not for claims: ' if short else ''}{seconds} s per configuration, median of {rounds} round(s), {cores} cores"
set logscale xy
set xtics ({", ".join(str(c) for c in connections)})
set xlabel "concurrent connections"
set key outside right top
set grid
data = "{data}"
set title "4 KiB requests: requests/s"
{plot("4k", 2)}
set title "4 KiB requests: p99 latency, ms"
{plot("4k", 3)}
set title "4 MiB requests: requests/s"
{plot("4m", 2)}
set title "4 MiB requests: p99 latency, ms"
{plot("4m", 3)}
unset multiplot
""")
print("wrote the server section of", os.path.join(results, "server-section.md") if short else page,
      "(a short run: docs/ left as it was)" if short else "")
