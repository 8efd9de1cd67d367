package org.jdlpack.onnxruntime;

import java.util.Optional;

import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.TensorInfo;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;

/** DLPack element types and ONNX Runtime Java's, both ways. */
final class OrtTypes {

    private OrtTypes() {
    }

    /** {@return ONNX Runtime Java's type for {@code dtype}, whose bytes ORT reads as they are} */
    static Optional<OnnxJavaType> javaType(DLDataType dtype) {
        if (dtype.lanes() != 1) {
            return Optional.empty();
        }
        OnnxJavaType type = switch (dtype.code()) {
            case FLOAT -> switch (dtype.bits()) {
                case 16 -> OnnxJavaType.FLOAT16;
                case 32 -> OnnxJavaType.FLOAT;
                case 64 -> OnnxJavaType.DOUBLE;
                default -> null;
            };
            case BFLOAT -> dtype.bits() == 16 ? OnnxJavaType.BFLOAT16 : null;
            case INT -> switch (dtype.bits()) {
                case 8 -> OnnxJavaType.INT8;
                case 16 -> OnnxJavaType.INT16;
                case 32 -> OnnxJavaType.INT32;
                case 64 -> OnnxJavaType.INT64;
                default -> null;
            };
            case UINT -> dtype.bits() == 8 ? OnnxJavaType.UINT8 : null;
            case BOOL -> dtype.bits() == 8 ? OnnxJavaType.BOOL : null;
            // ONNX Runtime Java has no type for these (whyNot says which ONNX Runtime itself has).
            case OPAQUE_HANDLE, COMPLEX, BCOMPLEX, FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FLOAT8_E4M3FN,
                 FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU, FLOAT6_E2M3FN, FLOAT6_E3M2FN,
                 FLOAT4_E2M1FN -> null;
        };
        return Optional.ofNullable(type);
    }

    /** {@return the refusal of a {@code dtype} ONNX Runtime Java lacks: it names the type and says why} */
    static IllegalArgumentException refusal(DLDataType dtype, String what) {
        return new IllegalArgumentException(what + ": DLTensor.dtype is " + dtype + ", " + whyNot(dtype));
    }

    private static String whyNot(DLDataType dtype) {
        if (dtype.lanes() != 1) {
            return "a vector type (" + dtype.lanes() + " lanes); ONNX Runtime tensors have one value per element";
        }
        if (dtype.code() == DLDataTypeCode.UINT && (dtype.bits() == 16 || dtype.bits() == 32 || dtype.bits() == 64)) {
            return "and ONNX Runtime's Java API has no uint" + dtype.bits() + " tensor type (OnnxJavaType has UINT8 only): "
                    + "a signed twin is refused by a uint" + dtype.bits() + " model input. Convert the values, or use a model "
                    + "whose input is int" + dtype.bits();
        }
        if (dtype.code() == DLDataTypeCode.COMPLEX || dtype.code() == DLDataTypeCode.BCOMPLEX) {
            // ONNX has complex64 and complex128 but ONNX Runtime's Java API has no tensor of them,
            // and ONNX has no complex type of bfloat16 parts at all.
            return "a complex type, which ONNX Runtime's Java API cannot take (OnnxJavaType has no complex type); pass the "
                    + "real and imaginary parts as two tensors";
        }
        return "which ONNX Runtime's Java API cannot take (it has float16/32/64, bfloat16, int8/16/32/64, uint8 and bool)";
    }

    /**
     * {@return the DLPack type of an ONNX Runtime output; unsigned types come from the ONNX type,
     * as ONNX Runtime Java reports uint16/32/64 outputs with the signed Java type}
     */
    static Optional<DLDataType> dtypeOf(TensorInfo info) {
        DLDataType dtype = switch (info.onnxType) {
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT -> DLDataType.FLOAT32;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE -> DLDataType.FLOAT64;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 -> DLDataType.FLOAT16;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 -> DLDataType.BFLOAT16;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 -> DLDataType.INT8;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16 -> DLDataType.INT16;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 -> DLDataType.INT32;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 -> DLDataType.INT64;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 -> DLDataType.UINT8;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16 -> DLDataType.UINT16;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32 -> DLDataType.UINT32;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 -> DLDataType.UINT64;
            case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL -> DLDataType.BOOL;
            default -> null;
        };
        return Optional.ofNullable(dtype);
    }
}
