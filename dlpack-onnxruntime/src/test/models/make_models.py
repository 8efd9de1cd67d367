#!/usr/bin/python3
"""The tiny ONNX models the tests and the example server run, made without a network.

Run with Debian's python3-onnx (onnx 1.12, which writes at most opset 17 and IR 8; ONNX Runtime
1.23 loads those):

    /usr/bin/python3 dlpack-onnxruntime/src/test/models/make_models.py

It writes the test models into dlpack-onnxruntime/src/test/resources/org/jdlpack/onnxruntime/ and
the server's model into examples/src/main/resources/org/jdlpack/examples/server/. The output is
deterministic: run it again and git shows no change.
"""
import os
import numpy as np
import onnx
from onnx import helper, TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
TESTS = os.path.join(ROOT, "dlpack-onnxruntime", "src", "test", "resources", "org", "jdlpack", "onnxruntime")
SERVER = os.path.join(ROOT, "examples", "src", "main", "resources", "org", "jdlpack", "examples", "server")
OPSET = 17
IR = 8


def save(graph, folder, name):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="jdlpack")
    m.ir_version = IR
    onnx.checker.check_model(m)
    os.makedirs(folder, exist_ok=True)
    onnx.save(m, os.path.join(folder, name))
    print("wrote", os.path.relpath(os.path.join(folder, name), ROOT))


# tiny: y = Relu(x @ W + b), x [N,4] -> y [N,3]
W = np.array([[1, 0, 2], [0.5, -1, 0], [0, 1, -1], [1, 1, 1]], dtype=np.float32)
b = np.array([0.1, 0.2, 0.3], dtype=np.float32)
save(helper.make_graph(
    [helper.make_node("MatMul", ["x", "W"], ["xw"]),
     helper.make_node("Add", ["xw", "b"], ["z"]),
     helper.make_node("Relu", ["z"], ["y"])],
    "tiny",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
    [numpy_helper.from_array(W, "W"), numpy_helper.from_array(b, "b")]), TESTS, "tiny.onnx")

# Identity per element type, x [N] -> y [N]
for name, t in [("float", TensorProto.FLOAT), ("double", TensorProto.DOUBLE),
                ("float16", TensorProto.FLOAT16), ("bfloat16", TensorProto.BFLOAT16),
                ("int8", TensorProto.INT8), ("uint8", TensorProto.UINT8),
                ("int16", TensorProto.INT16), ("int32", TensorProto.INT32),
                ("int64", TensorProto.INT64), ("bool", TensorProto.BOOL)]:
    save(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "id_" + name,
                           [helper.make_tensor_value_info("x", t, ["N"])],
                           [helper.make_tensor_value_info("y", t, ["N"])]), TESTS, "id_%s.onnx" % name)

# Cast int32 -> uint32: an unsigned output, which ONNX Runtime Java can only hand out as a copy
save(helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.UINT32)], "cast_uint32",
                       [helper.make_tensor_value_info("x", TensorProto.INT32, ["N"])],
                       [helper.make_tensor_value_info("y", TensorProto.UINT32, ["N"])]), TESTS, "cast_uint32.onnx")

# NonZero: the output's shape [1, count of non-zero x] is known only after the run
save(helper.make_graph([helper.make_node("NonZero", ["x"], ["y"])], "nonzero",
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
                       [helper.make_tensor_value_info("y", TensorProto.INT64, [1, "M"])]), TESTS, "nonzero.onnx")

# The example server's scorer: logits = x @ W + b, x [N,16] -> logits [N,4].
# W[i,j] = ((4*i + j) % 7 - 3) / 4, b = [0.1, -0.2, 0.3, 0]; ServerTest recomputes both by hand.
Ws = np.array([[((4 * i + j) % 7 - 3) / 4 for j in range(4)] for i in range(16)], dtype=np.float32)
bs = np.array([0.1, -0.2, 0.3, 0.0], dtype=np.float32)
save(helper.make_graph(
    [helper.make_node("MatMul", ["x", "W"], ["xw"]),
     helper.make_node("Add", ["xw", "b"], ["logits"])],
    "scorer",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 4])],
    [numpy_helper.from_array(Ws, "W"), numpy_helper.from_array(bs, "b")]), SERVER, "scorer.onnx")

x = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.float32)
print("tiny reference for [[1,2,3,4],[5,6,7,8]]:", np.maximum(x @ W + b, 0).tolist())
