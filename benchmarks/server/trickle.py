#!/usr/bin/env python3
"""Slow clients: every INTERVAL_MS a new connection sends the headers of a 1-row request (64 body
bytes) and SENT of its body bytes (default 10), then holds the socket open for HOLD_S seconds
(default 1) and hangs up without sending the rest. Runs until killed (SIGTERM); then prints one line:
RESULT opened=N refused=M most_open=K.

    python3 trickle.py PORT INTERVAL_MS [PATH [SENT [HOLD_S]]]   # PATH: /classify or /classify?route=numpy

One thread, non-blocking in the sense that matters: connecting to localhost and writing 200 bytes do
not wait on the server's handler, so the schedule holds at 10 ms intervals (100 sockets open at once).
"""
import signal, socket, sys, time

port, interval = int(sys.argv[1]), float(sys.argv[2]) / 1000
path = sys.argv[3] if len(sys.argv) > 3 else "/classify"
sent = int(sys.argv[4]) if len(sys.argv) > 4 else 10
hold = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
head = (b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Shape: 1,16\r\n"
        b"Content-Type: application/octet-stream\r\nContent-Length: 64\r\n\r\n")
opened = refused = most_open = 0
open_sockets = []  # (close_at, socket), in the order opened: the oldest closes first


def stop(*_):
    for _, s in open_sockets:
        s.close()
    print("RESULT opened=%d refused=%d most_open=%d" % (opened, refused, most_open), flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
next_open = time.monotonic()
while True:
    now = time.monotonic()
    while open_sockets and open_sockets[0][0] <= now:
        open_sockets.pop(0)[1].close()
    if now >= next_open:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(head + b"\0" * sent)
            open_sockets.append((now + hold, s))
            opened += 1
            most_open = max(most_open, len(open_sockets))
        except OSError:
            refused += 1
        next_open += interval
        if next_open < now - 1:  # fell more than a second behind: do not burst to catch up
            next_open = now + interval
    wake = next_open if not open_sockets else min(next_open, open_sockets[0][0])
    time.sleep(max(0.0, wake - time.monotonic()))
