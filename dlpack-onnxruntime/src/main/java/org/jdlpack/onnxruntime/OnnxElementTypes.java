package org.jdlpack.onnxruntime;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;

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

    /** ONNX's names of its element types, by value ({@code TensorProto.DataType}), for messages. */
    private static final String[] NAMES = {"undefined", "float", "uint8", "int8", "uint16", "int16", "int32", "int64", "string",
        "bool", "float16", "double", "uint32", "uint64", "complex64", "complex128", "bfloat16", "float8e4m3fn", "float8e4m3fnuz",
        "float8e5m2", "float8e5m2fnuz", "uint4", "int4", "float4e2m1"};

    /**
     * {@return the DLPack type of ONNX Runtime's element type {@code type}, the inverse of
     * {@link #of}, or null where DLPack has none that lays the bytes out alike (string, complex,
     * the 4-bit types ONNX packs its own way)}
     *
     * @param type an {@code ONNXTensorElementDataType}
     */
    static DLDataType dtype(int type) {
        return switch (type) {
            case 1 -> DLDataType.FLOAT32;
            case 2 -> DLDataType.UINT8;
            case 3 -> DLDataType.INT8;
            case 4 -> DLDataType.UINT16;
            case 5 -> DLDataType.INT16;
            case 6 -> DLDataType.INT32;
            case 7 -> DLDataType.INT64;
            case 9 -> DLDataType.BOOL;
            case 10 -> DLDataType.FLOAT16;
            case 11 -> DLDataType.FLOAT64;
            case 12 -> DLDataType.UINT32;
            case 13 -> DLDataType.UINT64;
            case 16 -> DLDataType.BFLOAT16;
            case 17 -> new DLDataType(DLDataTypeCode.FLOAT8_E4M3FN, 8, 1);
            case 18 -> new DLDataType(DLDataTypeCode.FLOAT8_E4M3FNUZ, 8, 1);
            case 19 -> new DLDataType(DLDataTypeCode.FLOAT8_E5M2, 8, 1);
            case 20 -> new DLDataType(DLDataTypeCode.FLOAT8_E5M2FNUZ, 8, 1);
            default -> null;
        };
    }

    /** {@return ONNX's name of element type {@code type}, with its value} */
    static String name(int type) {
        return (type >= 0 && type < NAMES.length ? NAMES[type] : "element type") + " (" + type + ")";
    }

    /** {@return the refusal of a type ONNX Runtime has no tensor of, naming {@code what}} */
    static IllegalArgumentException refusal(DLDataType dtype, String what) {
        return new IllegalArgumentException(what + ": DLTensor.dtype is " + dtype + ", which ONNX Runtime has no tensor type for "
                + "(it takes float16/32/64, bfloat16, int8/16/32/64, uint8/16/32/64, bool and float8 e4m3fn, e4m3fnuz, e5m2, "
                + "e5m2fnuz; complex tensors it does not run); convert the values first");
    }
}
