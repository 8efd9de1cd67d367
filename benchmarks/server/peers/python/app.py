"""A benchmark peer of the jdlpack example inference server: FastAPI on uvicorn, onnxruntime and NumPy,
the same HTTP contract (docs/serving.md, "The example server"), the same model and ONNX Runtime
options (one intra-op and one inter-op thread per session), written as a Python service would be.

    python app.py PORT MODEL WORKERS     # WORKERS processes (uvicorn --workers), one session each

The listening socket is made here with TCP_NODELAY set (accepted connections inherit it, as behind
production servers), then handed to uvicorn, whose workers share it.
"""
import os
import re
import socket
import sys

import numpy as np
import onnxruntime as ort
from fastapi import FastAPI, Request, Response

FEATURES, TOP, MAX_ROWS = 16, 2, 1 << 18
SHAPE = re.compile(r"([1-9][0-9]{0,8}),16")
MEAN, STD = np.float32(0.5), np.float32(2.0)

app = FastAPI()
_session = None


def session():
    global _session
    if _session is None:  # one per worker process, made in the worker
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 4
        _session = ort.InferenceSession(os.environ["PEER_MODEL"], options, providers=["CPUExecutionProvider"])
    return _session


def refuse(status, message):
    return Response(message + "\n", status_code=status, media_type="text/plain; charset=utf-8")


def rows_of(request):
    """The example server's checks, before the body is read: the rows, or a message for 400."""
    shapes = request.headers.getlist("x-shape")
    if not shapes:
        return "the X-Shape header is missing: send X-Shape: ROWS,16"
    m = SHAPE.fullmatch(shapes[0]) if len(shapes) == 1 else None
    if not m:
        return f"X-Shape is {shapes}; send X-Shape: ROWS,16"
    rows = int(m.group(1))
    if rows > MAX_ROWS:
        return f"X-Shape asks for {rows} rows; send 1 to {MAX_ROWS}"
    if request.headers.get("content-length") != str(rows * FEATURES * 4):
        return f"the body holds {request.headers.get('content-length')} bytes; X-Shape needs {rows * FEATURES * 4}"
    return rows


@app.api_route("/classify", methods=["GET", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"])
async def not_post():
    return refuse(405, "POST a body of float32 rows")


@app.post("/classify")
async def classify(request: Request):
    rows = rows_of(request)
    if isinstance(rows, str):
        await request.body()  # drain it, so the connection stays usable
        return refuse(400, rows)
    x = np.frombuffer(await request.body(), dtype="<f4").reshape(rows, FEATURES)
    finite = np.isfinite(x).all(axis=1)
    if not finite.all():
        return refuse(400, f"row {int(np.argmin(finite))} holds NaN or infinity")
    x = (x - MEAN) / STD
    (z,) = session().run(["logits"], {"x": x})
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    idx = np.argsort(-p, axis=1, kind="stable")[:, :TOP]
    body = idx.astype("<i4").tobytes() + np.take_along_axis(p, idx, axis=1).astype("<f4").tobytes()
    return Response(body, media_type="application/octet-stream", headers={"X-Shape": f"{rows},{TOP}"})


if __name__ == "__main__":
    import uvicorn

    port, model, workers = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    os.environ["PEER_MODEL"] = model
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1024)
    listener.set_inheritable(True)
    print(f"python peer server ({workers} workers) on http://127.0.0.1:{port}/classify", flush=True)
    uvicorn.run("app:app", fd=listener.fileno(), workers=workers, log_level="warning", access_log=False,
                app_dir=os.path.dirname(os.path.abspath(__file__)))
