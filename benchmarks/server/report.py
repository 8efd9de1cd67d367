#!/usr/bin/env python3
"""Turns benchmarks/server/load.sh's results into the section "The inference server under load" of
docs/benchmarks.md (between its markers; the rest of the page is left as it is) and a gnuplot script
for docs/benchmarks-server.png.

    python3 report.py RESULTS DOCS
"""
import csv, os, re, sys

results, docs = sys.argv[1], sys.argv[2]
BEGIN, END = "<!-- server-load:begin -->", "<!-- server-load:end -->"


def read(name):
    with open(os.path.join(results, name)) as f:
        return f.read().strip()


def stat(text, key):
    m = re.search(r"(?:^|[ \[,])" + key + r"=(\d+)", text)
    return int(m.group(1)) if m else None


rows = list(csv.DictReader(open(os.path.join(results, "load.tsv")), delimiter="\t"))
seconds, endurance = read("durations.txt").split()
by = {(r["payload"], r["route"], int(r["connections"])): r for r in rows}
lines = [BEGIN, "## The inference server under load", ""]
lines += [
    f"The example server (`examples`, `org.jdlpack.examples.server`; see [the ONNX Runtime guide](onnxruntime.md#the-example-server))"
    f" under [wrk](https://github.com/wg/wrk) on the same machine: {read('cores.txt')} cores, {read('jdk.txt')}; "
    f"{seconds} s per configuration after a warm-up, one server JVM (`-Xmx2g`) for the whole table. "
    "Reproduce with `bash benchmarks/run.sh server [SECONDS] [ENDURANCE_SECONDS]` (defaults 60 and 300). "
    "A request is 64 rows (4 KiB) or 65,536 rows (4 MiB) of 16 float32; the zero-copy route reads the body "
    "into native memory once and shares it with NumPy and ONNX Runtime through DLPack, the copying route copies at "
    "every boundary (Java arrays, Python lists, ONNX Runtime's heap buffers). Heap per request is the growth of "
    "`ThreadMXBean.getTotalThreadAllocatedBytes()` over the run divided by the requests served (all threads: the HTTP "
    "dispatcher's share of each request is in it, and so is background work, which weighs more in runs with few "
    "requests, such as the 4 MiB ones); the inference share "
    "is the time inside ONNX Runtime runs over the time in request handlers. wrk runs on the same cores as the server.",
    "",
    *([f"**A short run ({seconds} s per configuration, {endurance} s of endurance), made to check the script: the figures are "
       "indicative only. The page's figures come from the defaults, 60 s and 300 s.**", ""]
      if int(seconds) < 60 or int(endurance) < 300 else []),
    "![requests/s and p99 latency against concurrency](benchmarks-server.png)",
    "",
    "| payload | route | connections | requests/s | p50 ms | p99 ms | heap B/request | inference share | zero-copy / copying |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|",
]
for r in rows:
    ratio = ""
    if r["route"] == "zero-copy":
        copy = by.get((r["payload"], "copy", int(r["connections"])))
        if copy and float(copy["rps"]) > 0:
            ratio = f"{float(r['rps']) / float(copy['rps']):.2f}x"
    lines.append(f"| {r['payload'].replace('k', ' KiB').replace('m', ' MiB')} | {r['route']} | {r['connections']} | "
                 f"{float(r['rps']):,.0f} | {float(r['p50_ms']):.2f} | {float(r['p99_ms']):.2f} | {int(r['heap_bytes_per_request']):,} | "
                 f"{float(r['inference_share']):.0%} | {ratio} |")
non2xx = sum(int(r["non2xx"]) for r in rows)
errors = sum(int(r["errors"]) for r in rows)
lines += ["", f"Across the table wrk saw {non2xx} non-2xx answers and {errors} socket errors or timeouts.", ""]

# Targets
zc = by.get(("4m", "zero-copy", 8))
cp = by.get(("4m", "copy", 8))
targets = []
if zc and cp and float(cp["rps"]) > 0:
    ratio = float(zc["rps"]) / float(cp["rps"])
    targets.append(("4 MiB at concurrency 8: zero-copy at least 2x the copying route's requests/s",
                    f"{ratio:.2f}x (inference share {float(zc['inference_share']):.0%} zero-copy, {float(cp['inference_share']):.0%} copying)",
                    ratio >= 2))
small = [int(by[("4k", "zero-copy", c)]["heap_bytes_per_request"]) for c in (1, 8, 64) if ("4k", "zero-copy", c) in by]
large = [int(by[("4m", "zero-copy", c)]["heap_bytes_per_request"]) for c in (1, 8, 64) if ("4m", "zero-copy", c) in by]
if small and large:
    s, l = sorted(small)[len(small) // 2], sorted(large)[len(large) // 2]
    targets.append(("zero-copy heap per request independent of the payload (4 MiB within 2x of 4 KiB, medians over concurrency)",
                    f"{s:,} B at 4 KiB, {l:,} B at 4 MiB ({l / max(1, s):.2f}x)", l <= 2 * s))

rss = [line.split("\t") for line in read("endurance-rss.tsv").splitlines() if line.strip()]
end_stats = read("endurance-stats.txt")
endurance_line = next((l for l in read("endurance.txt").splitlines() if l.startswith("RESULT")), "")
disconnects = next((l for l in read("disconnects.txt").splitlines() if l.startswith("RESULT")), "RESULT disconnects=0")
e = dict(kv.split("=") for kv in endurance_line.split()[1:]) if endurance_line else {}
first, last = int(rss[0][1]), int(rss[-1][1])
growth = (last - first) / first
targets.append((f"RSS growth from the first fifth to the end of the endurance run under 10%",
                f"{first / 1024:.0f} MiB at {rss[0][0]} s, {last / 1024:.0f} MiB at {rss[-1][0]} s ({growth:+.1%})", growth < 0.10))
live = (stat(end_stats, "liveExports"), stat(end_stats, "ownedManagedTensors"), stat(end_stats, "leaksReported"))
targets.append(("after the endurance run: 0 live exports, 0 owned tensors, 0 leaks", f"{live[0]}, {live[1]}, {live[2]}", live == (0, 0, 0)))
targets.append(("0 server errors (5xx) during the endurance run", str(stat(end_stats, "serverError")), stat(end_stats, "serverError") == 0))

lines += ["### Endurance", "",
          f"{endurance} s at concurrency 64, 4 KiB zero-copy requests, 1 in 100 with a wrong `X-Shape` (answered 400), "
          "a fresh server JVM with a 512 MiB heap touched in full at start (`-XX:+AlwaysPreTouch`, so RSS growth is native memory), "
          f"and clients that send half a body and hang up, five a second ({disconnects.split('=')[1]} of them). "
          f"wrk: {float(e.get('rps', 0)):,.0f} requests/s, p50 {float(e.get('p50_ms', 0)):.2f} ms, p99 {float(e.get('p99_ms', 0)):.2f} ms, "
          f"{e.get('non2xx', '?')} non-2xx, {e.get('errors', '?')} socket errors.", "",
          "| time | RSS |", "|---:|---:|"]
lines += [f"| {t} s | {int(kib) / 1024:.0f} MiB |" for t, kib in rss]
lines += ["", f"The server's counters after the run: `{end_stats}`", "",
          "### Targets", "", "| target | measured | met |", "|---|---|---|"]
lines += [f"| {t} | {m} | {'yes' if ok else '**no**'} |" for t, m, ok in targets]
lines += ["", END]
section = "\n".join(lines)

page = os.path.join(docs, "benchmarks.md")
text = open(page).read() if os.path.exists(page) else "# Benchmarks\n"
if BEGIN in text and END in text:
    text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END):]
else:
    text = text.rstrip("\n") + "\n\n" + section + "\n"
open(page, "w").write(text)

with open(os.path.join(results, "server-plot.dat"), "w") as f:
    for payload in ("4k", "4m"):
        for route in ("zero-copy", "copy"):
            f.write(f"# {payload} {route}\n")
            for c in (1, 8, 64):
                r = by.get((payload, route, c))
                if r:
                    f.write(f"{c} {float(r['rps'])} {float(r['p99_ms'])}\n")
            f.write("\n\n")
with open(os.path.join(results, "server-plot.gp"), "w") as f:
    f.write(f"""set terminal pngcairo size 1100,420 font "Sans,10"
set output "{os.path.join(docs, 'benchmarks-server.png')}"
set multiplot layout 1,2
set logscale xy
set xtics (1, 8, 64)
set xlabel "concurrent connections"
set key top left
set grid
data = "{os.path.join(results, 'server-plot.dat')}"
set title "requests/s"
plot data index 0 using 1:2 with linespoints title "4 KiB zero-copy", data index 1 using 1:2 with linespoints title "4 KiB copying", \\
     data index 2 using 1:2 with linespoints title "4 MiB zero-copy", data index 3 using 1:2 with linespoints title "4 MiB copying"
set title "p99 latency, ms"
set key top left
plot data index 0 using 1:3 with linespoints title "4 KiB zero-copy", data index 1 using 1:3 with linespoints title "4 KiB copying", \\
     data index 2 using 1:3 with linespoints title "4 MiB zero-copy", data index 3 using 1:3 with linespoints title "4 MiB copying"
unset multiplot
""")
print("wrote the server section of", page)
