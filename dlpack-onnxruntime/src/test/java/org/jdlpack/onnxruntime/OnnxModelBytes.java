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
        return unary("Identity", elementType);
    }

    /** {@return y = op(x) for a one-input, one-output operator that keeps type and shape (Neg, Abs...), x and y of shape [N]} */
    static byte[] unary(String op, int elementType) {
        return model(node(op, new byte[0]), valueInfo("x", elementType, true), valueInfo("y", elementType, true));
    }

    /** {@return y = op(x) as {@link #unary}, x and y of any shape} */
    static byte[] unaryAnyShape(String op, int elementType) {
        return model(node(op, new byte[0]), anyShape("x", elementType), anyShape("y", elementType));
    }

    /** {@return y = Cast(x, to): x of shape [N] and type {@code from}, y of type {@code to}} */
    static byte[] cast(int from, int to) {
        byte[] attribute = concat(string(1, "to"), varint(3, to), varint(20, 2)); // AttributeProto: name, i, type INT
        return model(node("Cast", message(5, attribute)), valueInfo("x", from, true), valueInfo("y", to, true));
    }

    /**
     * {@return y = NonZero(x): the indices of x's non-zero elements, int64 of shape [1, count], the
     * count decided by the values: an output whose shape is known only after the run}
     */
    static byte[] nonZero(int elementType) {
        return model(node("NonZero", new byte[0]), valueInfo("x", elementType, true), anyShape("y", 7)); // int64
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

    /** A ValueInfoProto of a tensor with no shape given: any rank, any extents. */
    private static byte[] anyShape(String name, int elementType) {
        return concat(string(1, name), message(2, message(1, varint(1, elementType))));
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
