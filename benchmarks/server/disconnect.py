#!/usr/bin/env python3
"""Clients that go away mid-request: each sends the headers of a 4 KiB request and half its body, then
closes the socket. Runs until killed, RATE connections a second; prints how many it made when stopped.

    python3 disconnect.py PORT RATE [PATH]     # PATH: /classify (default) or /classify?route=numpy
"""
import signal, socket, sys, time

port, rate = int(sys.argv[1]), float(sys.argv[2])
path = sys.argv[3] if len(sys.argv) > 3 else "/classify"
made = 0

def stop(*_):
    print("RESULT disconnects=%d" % made, flush=True)
    sys.exit(0)

signal.signal(signal.SIGTERM, stop)
head = (b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Shape: 64,16\r\n"
        b"Content-Type: application/octet-stream\r\nContent-Length: 4096\r\n\r\n")
while True:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(head + b"\0" * 2048)
        s.close()
        made += 1
    except OSError:
        pass
    time.sleep(1 / rate)
