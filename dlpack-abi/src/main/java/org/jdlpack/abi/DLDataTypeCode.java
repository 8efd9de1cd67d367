package org.jdlpack.abi;

import java.util.Optional;

/**
 * The type codes of the DLPack header ({@code DLDataTypeCode}), with their C enum values and the
 * bit widths this library accepts for each: those of DLPack 1.3, and {@code kDLBcomplex}, which
 * dlpack's main added after v1.3 without raising the minor version (a minor version adds only
 * enum values, so a 1.3 producer may send it).
 *
 * <p>Accepted widths, per code: integers 1, 2, 4, 8, 16, 32 or 64 bits; IEEE floats 16, 32 or 64;
 * bfloat 16; complex 32, 64 or 128 (two floats); bcomplex 32 (two bfloat16s); bool 8 (one byte
 * per value, as NumPy and PyTorch write it) or 1 (packed); an opaque handle any positive multiple
 * of 8; each float8 format 8, each float6 format 6 and the float4 format 4. Any other combination
 * is rejected: it could not be decoded correctly. So is a code after the last constant here.
 *
 * @since 0.1
 */
public enum DLDataTypeCode {
    /** {@code kDLInt}: signed two's-complement integer. */
    INT(0),
    /** {@code kDLUInt}: unsigned integer. */
    UINT(1),
    /** {@code kDLFloat}: IEEE 754 binary floating point. */
    FLOAT(2),
    /** {@code kDLOpaqueHandle}: an opaque handle; its bits say how wide it is. */
    OPAQUE_HANDLE(3),
    /** {@code kDLBfloat}: brain floating point (bfloat16). */
    BFLOAT(4),
    /** {@code kDLComplex}: a complex number, real part first; bits cover both parts. */
    COMPLEX(5),
    /** {@code kDLBool}: boolean. */
    BOOL(6),
    /** {@code kDLFloat8_e3m4}. */
    FLOAT8_E3M4(7),
    /** {@code kDLFloat8_e4m3}. */
    FLOAT8_E4M3(8),
    /** {@code kDLFloat8_e4m3b11fnuz}. */
    FLOAT8_E4M3B11FNUZ(9),
    /** {@code kDLFloat8_e4m3fn}. */
    FLOAT8_E4M3FN(10),
    /** {@code kDLFloat8_e4m3fnuz}. */
    FLOAT8_E4M3FNUZ(11),
    /** {@code kDLFloat8_e5m2}. */
    FLOAT8_E5M2(12),
    /** {@code kDLFloat8_e5m2fnuz}. */
    FLOAT8_E5M2FNUZ(13),
    /** {@code kDLFloat8_e8m0fnu}. */
    FLOAT8_E8M0FNU(14),
    /** {@code kDLFloat6_e2m3fn}. */
    FLOAT6_E2M3FN(15),
    /** {@code kDLFloat6_e3m2fn}. */
    FLOAT6_E3M2FN(16),
    /** {@code kDLFloat4_e2m1fn}. */
    FLOAT4_E2M1FN(17),
    /**
     * {@code kDLBcomplex}: a complex number of two bfloat16s, real part first, laid out as
     * {@link #COMPLEX} is; bits cover both parts (32). Added on dlpack's main after v1.3.
     */
    BCOMPLEX(18);

    private static final DLDataTypeCode[] BY_CODE = values();

    private final int code;

    DLDataTypeCode(int code) {
        this.code = code;
    }

    /** {@return the C enum value of this constant in {@code DLDataTypeCode}} */
    public int code() {
        return code;
    }

    /**
     * Looks up the constant for a C enum value.
     *
     * @param code a {@code DLDataTypeCode} value
     * @return the constant, or empty when the header these constants follow defines no type code with that value
     */
    public static Optional<DLDataTypeCode> of(int code) {
        return code >= 0 && code < BY_CODE.length ? Optional.of(BY_CODE[code]) : Optional.empty();
    }

    /**
     * Whether a value of this type may be {@code bits} wide.
     *
     * @param bits a bit width, as in {@code DLDataType.bits}
     * @return {@code true} when this library can describe and decode such a value
     */
    public boolean allowsBits(int bits) {
        return switch (this) {
            case INT, UINT -> bits == 1 || bits == 2 || bits == 4 || bits == 8 || bits == 16 || bits == 32 || bits == 64;
            case FLOAT -> bits == 16 || bits == 32 || bits == 64;
            case OPAQUE_HANDLE -> bits > 0 && bits % 8 == 0;
            case BFLOAT -> bits == 16;
            case COMPLEX -> bits == 32 || bits == 64 || bits == 128;
            case BOOL -> bits == 1 || bits == 8;
            case FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ,
                 FLOAT8_E5M2, FLOAT8_E5M2FNUZ, FLOAT8_E8M0FNU -> bits == 8;
            case FLOAT6_E2M3FN, FLOAT6_E3M2FN -> bits == 6;
            case FLOAT4_E2M1FN -> bits == 4;
            case BCOMPLEX -> bits == 32;
        };
    }
}
