package org.jdlpack.onnxruntime;

import org.jdlpack.abi.DLDataType;

/**
 * DLPack element types and ONNX Runtime's C API ones ({@code ONNXTensorElementDataType}, the values
 * of ONNX's {@code TensorProto.DataType}), for the C route: every type whose bytes ONNX Runtime reads
 * as DLPack lays them out, the unsigned and float8 types included, which ONNX Runtime Java cannot
 * take ({@link OrtTypes} is that API's map).
 */
final class OnnxElementTypes {

    /** {@code ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED}: no ONNX type. */
    static final int UNDEFINED = 0;

    private OnnxElementTypes() {
    }

    /** {@return the {@code ONNXTensorElementDataType} of {@code dtype}, or {@link #UNDEFINED}} */
    static int of(DLDataType dtype) {
        if (dtype.lanes() != 1) {
            return UNDEFINED;
        }
        int bits = dtype.bits();
        return switch (dtype.code()) {
            case FLOAT -> bits == 32 ? 1 : bits == 16 ? 10 : bits == 64 ? 11 : UNDEFINED;
            case UINT -> bits == 8 ? 2 : bits == 16 ? 4 : bits == 32 ? 12 : bits == 64 ? 13 : UNDEFINED;
            case INT -> bits == 8 ? 3 : bits == 16 ? 5 : bits == 32 ? 6 : bits == 64 ? 7 : UNDEFINED;
            case BOOL -> bits == 8 ? 9 : UNDEFINED;
            case BFLOAT -> bits == 16 ? 16 : UNDEFINED;
            case FLOAT8_E4M3FN -> bits == 8 ? 17 : UNDEFINED;
            case FLOAT8_E4M3FNUZ -> bits == 8 ? 18 : UNDEFINED;
            case FLOAT8_E5M2 -> bits == 8 ? 19 : UNDEFINED;
            case FLOAT8_E5M2FNUZ -> bits == 8 ? 20 : UNDEFINED;
            // ONNX has complex64/128, but ONNX Runtime registers no tensor type for them; ONNX's
            // float4 packs two values per byte in an order of its own; the rest ONNX lacks.
            case COMPLEX, BCOMPLEX, OPAQUE_HANDLE, FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FLOAT8_E8M0FNU, FLOAT6_E2M3FN,
                 FLOAT6_E3M2FN, FLOAT4_E2M1FN -> UNDEFINED;
        };
    }

    /** {@return the refusal of a type ONNX Runtime has no tensor of, naming {@code what}} */
    static IllegalArgumentException refusal(DLDataType dtype, String what) {
        return new IllegalArgumentException(what + ": DLTensor.dtype is " + dtype + ", which ONNX Runtime has no tensor type for "
                + "(it takes float16/32/64, bfloat16, int8/16/32/64, uint8/16/32/64, bool and float8 e4m3fn, e4m3fnuz, e5m2, "
                + "e5m2fnuz; complex tensors it does not run); convert the values first");
    }
}
