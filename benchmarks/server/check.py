#!/usr/bin/env python3
"""Checks that a peer answers exactly like the example server before load.sh puts load on it: posts
the load bodies and a set of bad requests to both and compares status codes, X-Shape and answers
(classes equal, probabilities within float32 rounding: the peers compute softmax in their own
language). Prints one line per difference and a last line `CHECK name ok|FAILED ...`; exits 1 on a
difference in the contract, 0 otherwise.

    python3 check.py NAME REFERENCE_PORT PEER_PORT PEER_PATH BODY...    # PEER_PATH: /classify or /classify?route=numpy

Two groups of bad requests:
  contract   missing or wrong X-Shape, 0 or too many rows, a body of another length, NaN, infinity,
             GET: a peer that answers one of them differently fails the check;
  spelling   X-Shape spellings the strict parser (issue 31 item 7) refuses and a lenient one takes,
             two X-Shape headers: differences are printed, not fatal (HTTP parsers strip spaces
             around a header value before an application sees it, so not every peer can tell).
"""
import http.client
import struct
import sys

name, reference, peer, peer_path, bodies = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]
ROW = struct.pack("<16f", *[i / 4 - 2 for i in range(16)])


def post(port, headers, body, method="POST"):
    path = peer_path if port == peer else "/classify"
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        c.putrequest(method, path, skip_accept_encoding=True)
        for k, v in headers:
            c.putheader(k, v)
        c.putheader("Content-Length", str(len(body)))
        c.endheaders(body)
        r = c.getresponse()
        return r.status, r.getheader("X-Shape"), r.read()
    finally:
        c.close()


def shape(rows):
    return [("X-Shape", f"{rows},16"), ("Content-Type", "application/octet-stream")]


def with_value(row, column, value):
    data = bytearray(ROW * 4)
    struct.pack_into("<f", data, (row * 16 + column) * 4, value)
    return bytes(data)


contract = [
    ("no X-Shape", [], ROW),
    ("X-Shape 1,15", [("X-Shape", "1,15")], ROW),
    ("X-Shape abc,16", [("X-Shape", "abc,16")], ROW),
    ("X-Shape 1", [("X-Shape", "1")], ROW),
    ("X-Shape 0,16", [("X-Shape", "0,16")], b""),
    ("X-Shape 262145,16 (too many rows)", [("X-Shape", "262145,16")], ROW),
    ("X-Shape 2,16 with one row", shape(2), ROW),
    ("X-Shape 1,16 with an empty body", shape(1), b""),
    ("NaN in row 2", shape(4), with_value(2, 5, float("nan"))),
    ("infinity in row 0", shape(4), with_value(0, 0, float("inf"))),
    ("-infinity in row 3", shape(4), with_value(3, 15, float("-inf"))),
]
spelling = [(f"X-Shape {v!r}", [("X-Shape", v)], ROW) for v in ("1,16,", "1 ,16", "1, 16", "+1,16", "01,16", "1\t,16")]
spelling.append(("two X-Shape headers", [("X-Shape", "1,16"), ("X-Shape", "1,16")], ROW))

good = [("one row", 1, ROW), ("four rows", 4, ROW * 4)]
for path in bodies:
    data = open(path, "rb").read()
    good.append((path.rsplit("/", 1)[-1], len(data) // 64, data))

failures, notes = [], []


def same_answer(a, b, rows):
    if len(a) != rows * 16 or len(b) != rows * 16:
        return f"answer of {len(b)} bytes, the server's {len(a)}"
    ca, cb = struct.unpack(f"<{rows * 2}i", a[: rows * 8]), struct.unpack(f"<{rows * 2}i", b[: rows * 8])
    pa, pb = struct.unpack(f"<{rows * 2}f", a[rows * 8:]), struct.unpack(f"<{rows * 2}f", b[rows * 8:])
    for i in range(rows * 2):
        if abs(pa[i] - pb[i]) > 1e-6 + 1e-5 * abs(pa[i]):
            return f"row {i // 2}: probability {pb[i]!r}, the server's {pa[i]!r}"
        # A class may differ only where two probabilities tie within rounding.
        if ca[i] != cb[i] and abs(pa[i - i % 2] - pa[i - i % 2 + 1]) > 1e-6:
            return f"row {i // 2}: class {cb[i]}, the server's {ca[i]}"
    return None


for label, rows, body in good:
    a, b = post(reference, shape(rows), body), post(peer, shape(rows), body)
    if a[0] != 200:
        failures.append(f"{label}: the server itself answered {a[0]}: {a[2][:200]!r}")
    elif b[0] != 200 or b[1] != a[1]:
        failures.append(f"{label}: {b[0]} X-Shape {b[1]}, the server's 200 X-Shape {a[1]} ({b[2][:200]!r})")
    else:
        diff = same_answer(a[2], b[2], rows)
        if diff:
            failures.append(f"{label}: {diff}")
for group, cases in (("contract", contract), ("spelling", spelling)):
    for label, headers, body in cases:
        a, b = post(reference, headers, body)[0], post(peer, headers, body)[0]
        if a != b:
            (failures if group == "contract" else notes).append(f"{label}: {b}, the server's {a}")
a, b = post(reference, [], b"", method="GET")[0], post(peer, [], b"", method="GET")[0]
if a != b:
    failures.append(f"GET /classify: {b}, the server's {a}")

for line in notes:
    print(f"{name}: spelling differs (not fatal): {line}")
for line in failures:
    print(f"{name}: DIFFERS: {line}")
checked = len(good) + len(contract) + len(spelling) + 1
print(f"CHECK {name} {'ok' if not failures else 'FAILED'} requests={checked} differences={len(failures)} spelling_differences={len(notes)}")
sys.exit(1 if failures else 0)
