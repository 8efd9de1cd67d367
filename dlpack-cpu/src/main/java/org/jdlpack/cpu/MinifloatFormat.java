package org.jdlpack.cpu;


import org.jdlpack.abi.DLDataTypeCode;

/**
 * The floating-point formats narrower than 16 bits that DLPack 1.3 names: the float8 variants, the
 * two float6 formats and float4, as defined by their publications (the OCP 8-bit floating point and
 * microscaling (MX) specifications, and the "fnuz"/"b11" variants used by Graphcore and AMD).
 *
 * <p>Each format is described by its exponent and mantissa widths, its exponent bias, and how it
 * spends (or does not spend) encodings on infinity and NaN:
 * <ul>
 *   <li>IEEE-like ({@code e5m2}, {@code e4m3}, {@code e3m4}): all-ones exponent is infinity
 *       (zero mantissa) or NaN;</li>
 *   <li>{@code fn} ({@code e4m3fn}): no infinity; only all-ones exponent and mantissa is NaN;</li>
 *   <li>{@code fnuz}: no infinity, no negative zero; the negative-zero encoding is the only NaN;</li>
 *   <li>{@code e8m0fnu}: an unsigned power of two, no zero; 0xFF is NaN;</li>
 *   <li>float6 and float4 ({@code fn} without NaN): every encoding is a finite number.</li>
 * </ul>
 *
 * <p>Decoding is exact: every value of these formats is a {@code float}. Encoding rounds to
 * nearest, ties to even; a value that rounds beyond the largest finite one becomes infinity where
 * the format has it, else NaN where it has that, else the largest finite value of the same sign
 * (the saturating conversion the MX specification describes). NaN encodes as the format's NaN, or
 * throws for formats that have none.
 *
 * <p>Immutable and safe to use from any thread.
 */
enum MinifloatFormat {
    /** {@code float8_e3m4}: bias 3, IEEE-like infinities and NaN. */
    FLOAT8_E3M4(3, 4, 3, Specials.IEEE),
    /** {@code float8_e4m3}: bias 7, IEEE-like infinities and NaN. */
    FLOAT8_E4M3(4, 3, 7, Specials.IEEE),
    /** {@code float8_e4m3b11fnuz}: bias 11, no infinity, the negative-zero encoding is NaN. */
    FLOAT8_E4M3B11FNUZ(4, 3, 11, Specials.FNUZ),
    /** {@code float8_e4m3fn}: bias 7, no infinity, S.1111.111 is NaN (OCP E4M3). */
    FLOAT8_E4M3FN(4, 3, 7, Specials.FN),
    /** {@code float8_e4m3fnuz}: bias 8, no infinity, the negative-zero encoding is NaN. */
    FLOAT8_E4M3FNUZ(4, 3, 8, Specials.FNUZ),
    /** {@code float8_e5m2}: bias 15, IEEE-like infinities and NaN (OCP E5M2). */
    FLOAT8_E5M2(5, 2, 15, Specials.IEEE),
    /** {@code float8_e5m2fnuz}: bias 16, no infinity, the negative-zero encoding is NaN. */
    FLOAT8_E5M2FNUZ(5, 2, 16, Specials.FNUZ),
    /** {@code float8_e8m0fnu}: an unsigned exponent, bias 127, no zero, 0xFF is NaN (MX scale). */
    FLOAT8_E8M0FNU(8, 0, 127, Specials.E8M0),
    /** {@code float6_e2m3fn}: bias 1, every encoding finite (MX FP6 E2M3). */
    FLOAT6_E2M3FN(2, 3, 1, Specials.NONE),
    /** {@code float6_e3m2fn}: bias 3, every encoding finite (MX FP6 E3M2). */
    FLOAT6_E3M2FN(3, 2, 3, Specials.NONE),
    /** {@code float4_e2m1fn}: bias 1, every encoding finite (MX FP4 E2M1). */
    FLOAT4_E2M1FN(2, 1, 1, Specials.NONE);

    private enum Specials { IEEE, FN, FNUZ, E8M0, NONE }

    private final int exponentBits;
    private final int mantissaBits;
    private final int bias;
    private final Specials specials;
    private final int width;
    /** Decoded value of every encoding. */
    private final float[] table;
    /** Encodings of the non-negative finite values, ascending by value, for rounding. */
    private final int[] ascending;

    MinifloatFormat(int exponentBits, int mantissaBits, int bias, Specials specials) {
        this.exponentBits = exponentBits;
        this.mantissaBits = mantissaBits;
        this.bias = bias;
        this.specials = specials;
        this.width = (specials == Specials.E8M0 ? 0 : 1) + exponentBits + mantissaBits;
        this.table = new float[1 << width];
        for (int code = 0; code < table.length; code++) {
            table[code] = compute(code);
        }
        this.ascending = java.util.stream.IntStream.range(0, table.length)
                .filter(code -> !Float.isNaN(table[code]) && !Float.isInfinite(table[code]) && isNonNegative(code))
                .boxed()
                .sorted((a, b) -> Float.compare(table[a], table[b]))
                .mapToInt(Integer::intValue)
                .toArray();
    }

    private boolean isNonNegative(int code) {
        return specials == Specials.E8M0 || (code >> (width - 1)) == 0;
    }

    private float compute(int code) {
        int exponentMask = (1 << exponentBits) - 1;
        int exponent = (code >> mantissaBits) & exponentMask;
        int mantissa = code & ((1 << mantissaBits) - 1);
        boolean negative = specials != Specials.E8M0 && (code >> (width - 1)) != 0;
        switch (specials) {
            case IEEE -> {
                if (exponent == exponentMask) {
                    return mantissa == 0 ? (negative ? Float.NEGATIVE_INFINITY : Float.POSITIVE_INFINITY) : Float.NaN;
                }
            }
            case FN -> {
                if (exponent == exponentMask && mantissa == (1 << mantissaBits) - 1) {
                    return Float.NaN;
                }
            }
            case FNUZ -> {
                if (code == 1 << (width - 1)) {
                    return Float.NaN;
                }
            }
            case E8M0 -> {
                return exponent == 0xFF ? Float.NaN : Math.scalb(1f, exponent - bias);
            }
            case NONE -> {
                // every encoding is finite
            }
        }
        float magnitude = exponent == 0
                ? Math.scalb((float) mantissa, 1 - bias - mantissaBits)
                : Math.scalb((float) ((1 << mantissaBits) + mantissa), exponent - bias - mantissaBits);
        return negative ? -magnitude : magnitude;
    }

    /**
     * The format of a DLPack type code, for the float8, float6 and float4 codes.
     *
     * @param code a type code
     * @return the format
     * @throws IllegalArgumentException for any other code
     */
    public static MinifloatFormat of(DLDataTypeCode code) {
        return switch (code) {
            case FLOAT8_E3M4 -> FLOAT8_E3M4;
            case FLOAT8_E4M3 -> FLOAT8_E4M3;
            case FLOAT8_E4M3B11FNUZ -> FLOAT8_E4M3B11FNUZ;
            case FLOAT8_E4M3FN -> FLOAT8_E4M3FN;
            case FLOAT8_E4M3FNUZ -> FLOAT8_E4M3FNUZ;
            case FLOAT8_E5M2 -> FLOAT8_E5M2;
            case FLOAT8_E5M2FNUZ -> FLOAT8_E5M2FNUZ;
            case FLOAT8_E8M0FNU -> FLOAT8_E8M0FNU;
            case FLOAT6_E2M3FN -> FLOAT6_E2M3FN;
            case FLOAT6_E3M2FN -> FLOAT6_E3M2FN;
            case FLOAT4_E2M1FN -> FLOAT4_E2M1FN;
            case INT, UINT, FLOAT, OPAQUE_HANDLE, BFLOAT, COMPLEX, BOOL, BCOMPLEX ->
                    throw new IllegalArgumentException(code + " is not a float8, float6 or float4 type code");
        };
    }

    /** {@return the width of one value in bits: 8, 6 or 4} */
    public int bits() {
        return width;
    }

    /** {@return the exponent bias} */
    public int bias() {
        return bias;
    }

    /**
     * Decodes one value.
     *
     * @param code the encoding, in the low {@link #bits()} bits; higher bits are ignored
     * @return the value, exactly
     */
    public float toFloat(int code) {
        return table[code & (table.length - 1)];
    }

    /**
     * Encodes a value, rounding to nearest, ties to even.
     *
     * @param value the value
     * @return the encoding in the low {@link #bits()} bits
     * @throws IllegalArgumentException if {@code value} is NaN and the format has no NaN
     */
    public int fromFloat(float value) {
        if (Float.isNaN(value)) {
            return switch (specials) {
                case IEEE -> (((1 << exponentBits) - 1) << mantissaBits) | 1 << (mantissaBits - 1);
                case FN -> (1 << (width - 1)) - 1;
                case FNUZ -> 1 << (width - 1);
                case E8M0 -> 0xFF;
                case NONE -> throw new IllegalArgumentException(this + " has no NaN");
            };
        }
        boolean negative = value < 0 || (value == 0 && 1 / value < 0);
        float magnitude = Math.abs(value);
        if (specials == Specials.E8M0) {
            negative = false; // no sign bit: the magnitude is encoded
        }
        int largest = ascending[ascending.length - 1];
        float max = table[largest];
        int magnitudeCode;
        if (magnitude > max) {
            // Round to nearest even as if the exponent range went on: below max + half an ulp
            // (or at it, when max is even) the value is max; above, it overflows.
            float ulp = max - table[ascending[ascending.length - 2]];
            float halfway = max + ulp / 2;
            boolean roundsDown = magnitude < halfway || (magnitude == halfway && (largest & 1) == 0);
            if (roundsDown || specials == Specials.NONE) {
                magnitudeCode = largest;
            } else if (specials == Specials.IEEE) {
                magnitudeCode = ((1 << exponentBits) - 1) << mantissaBits;
            } else {
                return fromFloat(Float.NaN);
            }
        } else {
            magnitudeCode = nearest(magnitude);
        }
        if (specials == Specials.FNUZ && table[magnitudeCode] == 0) {
            return 0; // no negative zero: -0 and tiny negatives encode as +0
        }
        return negative ? magnitudeCode | 1 << (width - 1) : magnitudeCode;
    }

    private int nearest(float magnitude) {
        int low = 0;
        int high = ascending.length - 1;
        while (high - low > 1) {
            int middle = (low + high) >>> 1;
            if (table[ascending[middle]] <= magnitude) {
                low = middle;
            } else {
                high = middle;
            }
        }
        float below = table[ascending[low]];
        float above = table[ascending[high]];
        if (magnitude <= below) {
            return ascending[low];
        }
        float toBelow = magnitude - below;
        float toAbove = above - magnitude;
        if (toBelow != toAbove) {
            return toBelow < toAbove ? ascending[low] : ascending[high];
        }
        return (ascending[low] & 1) == 0 ? ascending[low] : ascending[high];
    }
}
