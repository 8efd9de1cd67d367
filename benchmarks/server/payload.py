#!/usr/bin/env python3
"""Writes a request body of ROWS rows of 16 little-endian float32 (finite, deterministic): payload.py ROWS FILE"""
import struct, sys

rows, path = int(sys.argv[1]), sys.argv[2]
values = [((r * 16 + c) * 7919 % 1000) / 250.0 - 2.0 for r in range(min(rows, 1024)) for c in range(16)]
block = struct.pack("<%df" % len(values), *values)
with open(path, "wb") as f:
    for start in range(0, rows, 1024):
        n = min(1024, rows - start)
        f.write(block[: n * 64])
