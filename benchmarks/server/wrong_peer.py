#!/usr/bin/env python3
"""A peer that is wrong on purpose, for check-selftest.sh: it forwards each request to the example
server on REFERENCE_PORT and then changes the answer as MODE says: prob (the last probability off by
1e-4), class (the first row's two classes swapped), nan (422 instead of 400 for NaN or infinity),
none (nothing: check.py must pass it).

    python3 wrong_peer.py REFERENCE_PORT PORT MODE
"""
import http.client
import http.server
import struct
import sys

reference, port, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]


def spoil(status, body):
    if status == 200 and mode in ("prob", "class"):
        rows = len(body) // 16
        classes = list(struct.unpack(f"<{rows * 2}i", body[: rows * 8]))
        probabilities = list(struct.unpack(f"<{rows * 2}f", body[rows * 8:]))
        if mode == "prob":
            probabilities[-1] += 1e-4
        else:
            classes[0], classes[1] = classes[1], classes[0]
        body = struct.pack(f"<{rows * 2}i", *classes) + struct.pack(f"<{rows * 2}f", *probabilities)
    if status == 400 and mode == "nan" and b"NaN" in body:
        status = 422
    return status, body


class Forward(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        c = http.client.HTTPConnection("127.0.0.1", reference, timeout=60)
        c.putrequest("POST", self.path, skip_accept_encoding=True)
        for k, v in self.headers.items():
            if k.lower() != "host":
                c.putheader(k, v)
        c.endheaders(body)
        r = c.getresponse()
        status, answer = spoil(r.status, r.read())
        self.send_response(status)
        if r.getheader("X-Shape"):
            self.send_header("X-Shape", r.getheader("X-Shape"))
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def do_GET(self):
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()


http.server.ThreadingHTTPServer(("127.0.0.1", port), Forward).serve_forever()
