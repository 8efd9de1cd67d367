package org.jdlpack.arrow;

import java.util.Optional;

import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.Types.MinorType;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;

/** The element types Arrow and DLPack share, and what each side does with the others. */
final class ArrowTypes {

    private static final ArrowType FLOAT32 = new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);

    private ArrowTypes() {
    }

    /** The DLPack type of a fixed-width Arrow vector's values, or empty when DLPack has none. Bit maps to bool. */
    static Optional<DLDataType> dtypeOf(MinorType type) {
        return Optional.ofNullable(switch (type) {
            case TINYINT -> DLDataType.INT8;
            case SMALLINT -> DLDataType.INT16;
            case INT -> DLDataType.INT32;
            case BIGINT -> DLDataType.INT64;
            case UINT1 -> DLDataType.UINT8;
            case UINT2 -> DLDataType.UINT16;
            case UINT4 -> DLDataType.UINT32;
            case UINT8 -> DLDataType.UINT64;
            case FLOAT2 -> DLDataType.FLOAT16;
            case FLOAT4 -> DLDataType.FLOAT32;
            case FLOAT8 -> DLDataType.FLOAT64;
            case BIT -> DLDataType.BOOL;
            default -> null;
        });
    }

    /** Why a vector type cannot be exported, for the refusal message. */
    static String whyNotExportable(MinorType type) {
        return switch (type) {
            case DECIMAL, DECIMAL256 -> "DLPack has no decimal type (a decimal is a scaled 128- or 256-bit integer); "
                    + "convert the column to Float8 or BigInt first";
            default -> "only fixed-width integer, unsigned, floating-point and Bit vectors, and FixedSizeList columns of "
                    + "them, map to DLPack tensors";
        };
    }

    /**
     * The Arrow type whose values have exactly this DLPack type's bytes, so a compact tensor can be
     * wrapped without copying; empty for types Arrow stores differently or lacks.
     */
    static Optional<ArrowType> sameLayout(DLDataType dtype) {
        if (dtype.lanes() != 1) {
            return Optional.empty();
        }
        int bits = dtype.bits();
        return Optional.ofNullable(switch (dtype.code()) {
            case INT, UINT -> bits == 8 || bits == 16 || bits == 32 || bits == 64
                    ? new ArrowType.Int(bits, dtype.code() == DLDataTypeCode.INT) : null;
            case FLOAT -> switch (bits) {
                case 16 -> new ArrowType.FloatingPoint(FloatingPointPrecision.HALF);
                case 32 -> FLOAT32;
                case 64 -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
                default -> null;
            };
            // No Arrow type has these bytes: converted (convertedType) or refused.
            case OPAQUE_HANDLE, BFLOAT, COMPLEX, BCOMPLEX, BOOL, FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ,
                 FLOAT8_E8M0FNU, FLOAT6_E2M3FN, FLOAT6_E3M2FN, FLOAT4_E2M1FN -> null;
        });
    }

    /**
     * For a DLPack type with no same-layout Arrow type: the Arrow type its values convert to
     * exactly (bool to Bit, bfloat16 and the 8/6/4-bit floats to float32, sub-byte integers to
     * 8-bit ones), or empty when there is none (complex and bcomplex: Arrow has no complex type;
     * opaque handles; vector lanes).
     */
    static Optional<ArrowType> convertedType(DLDataType dtype) {
        if (dtype.lanes() != 1) {
            return Optional.empty();
        }
        return Optional.ofNullable(switch (dtype.code()) {
            case BOOL -> ArrowType.Bool.INSTANCE;
            case BFLOAT, FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2,
                 FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU, FLOAT6_E2M3FN, FLOAT6_E3M2FN, FLOAT4_E2M1FN -> FLOAT32;
            case INT, UINT -> dtype.bits() < 8 ? new ArrowType.Int(8, dtype.code() == DLDataTypeCode.INT) : null;
            case FLOAT -> null; // 16, 32 and 64 bits have the same layout; no other width converts exactly
            case OPAQUE_HANDLE, COMPLEX, BCOMPLEX -> null; // Arrow has no complex type, and a handle has no value
        });
    }

    /** The DLPack type of an Arrow leaf type this module creates (the inverse of the two maps above). */
    static DLDataType dtypeOf(ArrowType type) {
        if (type instanceof ArrowType.Bool) {
            return DLDataType.BOOL;
        }
        if (type instanceof ArrowType.Int i) {
            return new DLDataType(i.getIsSigned() ? DLDataTypeCode.INT : DLDataTypeCode.UINT, i.getBitWidth(), 1);
        }
        FloatingPointPrecision precision = ((ArrowType.FloatingPoint) type).getPrecision();
        return switch (precision) {
            case HALF -> DLDataType.FLOAT16;
            case SINGLE -> DLDataType.FLOAT32;
            case DOUBLE -> DLDataType.FLOAT64;
        };
    }
}
