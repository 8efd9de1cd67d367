package org.jdlpack.onnxruntime;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * One-node ONNX models written as protobuf bytes by hand, for the C route's tests: a model per
 * element type (ONNX Runtime Java cannot feed uint16/32/64 or float8, and Debian's onnx 1.12 writes
 * no float8), with no Python. Field numbers are those of onnx.proto (IR 9, opset 19).
 */
final class OnnxModelBytes {

    private OnnxModelBytes() {
    }

    /** {@return y = Identity(x), x and y of {@code elementType} (an ONNX TensorProto.DataType) and shape [N]} */
    static byte[] identity(int elementType) {
        return model(node("Identity", new byte[0]), valueInfo("x", elementType, true), valueInfo("y", elementType, true));
    }

    /** {@return y = ReduceMax(x) over every axis, keepdims 0: a scalar of {@code elementType}} */
    static byte[] reduceMax(int elementType) {
        byte[] keepdims = concat(string(1, "keepdims"), varint(3, 0), varint(20, 2)); // AttributeProto: name, i, type INT
        return model(node("ReduceMax", message(5, keepdims)), valueInfo("x", elementType, true), valueInfo("y", elementType, false));
    }

    private static byte[] node(String op, byte[] attributes) {
        return concat(string(1, "x"), string(2, "y"), string(4, op), attributes); // NodeProto: input, output, op_type
    }

    private static byte[] valueInfo(String name, int elementType, boolean vector) {
        byte[] shape = vector ? message(2, message(1, string(2, "N"))) : message(2, new byte[0]); // [N] or a scalar
        byte[] tensor = concat(varint(1, elementType), shape); // TypeProto.Tensor: elem_type, shape
        return concat(string(1, name), message(2, message(1, tensor))); // ValueInfoProto: name, type { tensor_type }
    }

    private static byte[] model(byte[] node, byte[] input, byte[] output) {
        byte[] graph = concat(message(1, node), string(2, "g"), message(11, input), message(12, output));
        byte[] opset = concat(string(1, ""), varint(2, 19));
        return concat(varint(1, 9), string(2, "jdlpack-test"), message(7, graph), message(8, opset)); // ir_version 9
    }

    private static byte[] varint(int field, long value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        writeVarint(out, (long) field << 3);
        writeVarint(out, value);
        return out.toByteArray();
    }

    private static byte[] string(int field, String value) {
        return message(field, value.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] message(int field, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        writeVarint(out, ((long) field << 3) | 2);
        writeVarint(out, body.length);
        out.writeBytes(body);
        return out.toByteArray();
    }

    private static void writeVarint(ByteArrayOutputStream out, long value) {
        while ((value & ~0x7FL) != 0) {
            out.write((int) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        out.write((int) value);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }
}
