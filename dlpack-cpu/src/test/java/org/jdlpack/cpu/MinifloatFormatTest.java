package org.jdlpack.cpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every bit pattern of every format narrower than 32 bits, decoded through {@link HostTensorView}, against
 * a reference written separately from the format definitions, plus the anchor values the
 * publications state.
 */
class MinifloatFormatTest {

    /**
     * The reference: sign, exponent, mantissa fields and the special-value rule of each
     * publication, evaluated with Math.pow in double (not the production code's scalb on float).
     */
    private record Definition(int signBits, int exponentBits, int mantissaBits, int bias, String specials) {

        double decode(int code) {
            int mantissa = code & ((1 << mantissaBits) - 1);
            int exponent = (code >> mantissaBits) & ((1 << exponentBits) - 1);
            int sign = signBits == 0 ? 0 : (code >> (exponentBits + mantissaBits)) & 1;
            int allOnes = (1 << exponentBits) - 1;
            switch (specials) {
                case "ieee":
                    if (exponent == allOnes) {
                        return mantissa == 0 ? (sign == 1 ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY) : Double.NaN;
                    }
                    break;
                case "fn":
                    if (exponent == allOnes && mantissa == (1 << mantissaBits) - 1) {
                        return Double.NaN;
                    }
                    break;
                case "fnuz":
                    if (sign == 1 && exponent == 0 && mantissa == 0) {
                        return Double.NaN;
                    }
                    break;
                case "e8m0":
                    return exponent == 255 ? Double.NaN : Math.pow(2, exponent - bias);
                default:
                    break;
            }
            double magnitude = exponent == 0
                    ? mantissa / Math.pow(2, mantissaBits) * Math.pow(2, 1 - bias)
                    : (1 + mantissa / Math.pow(2, mantissaBits)) * Math.pow(2, exponent - bias);
            return sign == 1 ? -magnitude : magnitude;
        }
    }

    private static Definition definition(MinifloatFormat format) {
        return switch (format) {
            case FLOAT8_E3M4 -> new Definition(1, 3, 4, 3, "ieee");
            case FLOAT8_E4M3 -> new Definition(1, 4, 3, 7, "ieee");
            case FLOAT8_E4M3B11FNUZ -> new Definition(1, 4, 3, 11, "fnuz");
            case FLOAT8_E4M3FN -> new Definition(1, 4, 3, 7, "fn");
            case FLOAT8_E4M3FNUZ -> new Definition(1, 4, 3, 8, "fnuz");
            case FLOAT8_E5M2 -> new Definition(1, 5, 2, 15, "ieee");
            case FLOAT8_E5M2FNUZ -> new Definition(1, 5, 2, 16, "fnuz");
            case FLOAT8_E8M0FNU -> new Definition(0, 8, 0, 127, "e8m0");
            case FLOAT6_E2M3FN -> new Definition(1, 2, 3, 1, "none");
            case FLOAT6_E3M2FN -> new Definition(1, 3, 2, 3, "none");
            case FLOAT4_E2M1FN -> new Definition(1, 2, 1, 1, "none");
        };
    }

    private static DLDataTypeCode codeOf(MinifloatFormat format) {
        return DLDataTypeCode.valueOf(format.name());
    }

    @ParameterizedTest
    @EnumSource(MinifloatFormat.class)
    void everyBitPatternDecodesAsThePublishedDefinitionSays(MinifloatFormat format) {
        Definition definition = definition(format);
        int patterns = 1 << format.bits();
        try (Arena arena = Arena.ofConfined()) {
            // One value per byte (padded), through the tensor accessor users call.
            MemorySegment memory = arena.allocate(patterns);
            for (int code = 0; code < patterns; code++) {
                memory.set(JAVA_BYTE, code, (byte) code);
            }
            HostTensorView tensor = format.bits() == 8
                    ? HostTensorView.of(memory, new DLDataType(codeOf(format), 8, 1), patterns)
                    : HostTensorView.of(packed(arena, format.bits(), patterns), new DLDataType(codeOf(format), format.bits(), 1), patterns);
            for (int code = 0; code < patterns; code++) {
                double expected = definition.decode(code);
                double actual = tensor.getDouble(code);
                if (Double.isNaN(expected)) {
                    assertThat(actual).as("%s code 0x%02x", format, code).isNaN();
                } else {
                    assertThat(actual).as("%s code 0x%02x", format, code).isEqualTo(expected);
                }
                if (!Double.isNaN(expected)) {
                    // Encoding a decoded value gives back its code, but for the zero of fnuz (one zero only).
                    int roundTrip = format.fromFloat((float) expected);
                    assertThat(format.toFloat(roundTrip)).as("%s round trip of 0x%02x", format, code).isEqualTo((float) expected);
                }
            }
        }
    }

    /** Packs the codes 0, 1, 2, ... little bit-endian, {@code bits} bits each. */
    private static MemorySegment packed(Arena arena, int bits, int count) {
        MemorySegment memory = arena.allocate((long) Math.ceilDiv(bits * count, 8));
        for (int code = 0; code < count; code++) {
            for (int b = 0; b < bits; b++) {
                if ((code >> b & 1) != 0) {
                    long bit = (long) code * bits + b;
                    memory.set(JAVA_BYTE, bit / 8, (byte) (memory.get(JAVA_BYTE, bit / 8) | 1 << (bit % 8)));
                }
            }
        }
        return memory;
    }

    @Test
    void publishedAnchorValues() {
        // OCP 8-bit floating point: E4M3 max 448, min subnormal 2^-9; E5M2 max 57344, min subnormal 2^-16.
        assertThat(MinifloatFormat.FLOAT8_E4M3FN.toFloat(0x7E)).isEqualTo(448f);
        assertThat(MinifloatFormat.FLOAT8_E4M3FN.toFloat(0x01)).isEqualTo(0x1p-9f);
        assertThat(MinifloatFormat.FLOAT8_E4M3FN.toFloat(0x7F)).isNaN();
        assertThat(MinifloatFormat.FLOAT8_E5M2.toFloat(0x7B)).isEqualTo(57344f);
        assertThat(MinifloatFormat.FLOAT8_E5M2.toFloat(0x7C)).isEqualTo(Float.POSITIVE_INFINITY);
        assertThat(MinifloatFormat.FLOAT8_E5M2.toFloat(0x01)).isEqualTo(0x1p-16f);
        // fnuz variants: 0x80 is the only NaN; e4m3fnuz max 240, e5m2fnuz max 57344, e4m3b11fnuz max 30.
        assertThat(MinifloatFormat.FLOAT8_E4M3FNUZ.toFloat(0x80)).isNaN();
        assertThat(MinifloatFormat.FLOAT8_E4M3FNUZ.toFloat(0x7F)).isEqualTo(240f);
        assertThat(MinifloatFormat.FLOAT8_E5M2FNUZ.toFloat(0x7F)).isEqualTo(57344f);
        assertThat(MinifloatFormat.FLOAT8_E4M3B11FNUZ.toFloat(0x7F)).isEqualTo(30f);
        // IEEE-like e4m3 max 240 and e3m4 max 15.5.
        assertThat(MinifloatFormat.FLOAT8_E4M3.toFloat(0x77)).isEqualTo(240f);
        assertThat(MinifloatFormat.FLOAT8_E3M4.toFloat(0x6F)).isEqualTo(15.5f);
        // OCP MX: E8M0 scale 2^-127 .. 2^127, 0xFF NaN; FP6 E2M3 max 7.5; FP6 E3M2 max 28; FP4 E2M1 values.
        assertThat(MinifloatFormat.FLOAT8_E8M0FNU.toFloat(0x00)).isEqualTo(0x1p-127f);
        assertThat(MinifloatFormat.FLOAT8_E8M0FNU.toFloat(0xFE)).isEqualTo(0x1p127f);
        assertThat(MinifloatFormat.FLOAT8_E8M0FNU.toFloat(0xFF)).isNaN();
        assertThat(MinifloatFormat.FLOAT6_E2M3FN.toFloat(0x1F)).isEqualTo(7.5f);
        assertThat(MinifloatFormat.FLOAT6_E2M3FN.toFloat(0x01)).isEqualTo(0.125f);
        assertThat(MinifloatFormat.FLOAT6_E3M2FN.toFloat(0x1F)).isEqualTo(28f);
        assertThat(MinifloatFormat.FLOAT6_E3M2FN.toFloat(0x01)).isEqualTo(0.0625f);
        float[] fp4 = new float[16];
        for (int code = 0; code < 16; code++) {
            fp4[code] = MinifloatFormat.FLOAT4_E2M1FN.toFloat(code);
        }
        assertThat(fp4).containsExactly(0f, 0.5f, 1f, 1.5f, 2f, 3f, 4f, 6f, -0f, -0.5f, -1f, -1.5f, -2f, -3f, -4f, -6f);
    }

    @Test
    void encodingRoundsToNearestEvenAndHandlesOverflowPerFormat() {
        assertThat(MinifloatFormat.FLOAT4_E2M1FN.fromFloat(2.5f)).as("tie between 2 and 3 goes to even 2").isEqualTo(0x4);
        assertThat(MinifloatFormat.FLOAT4_E2M1FN.fromFloat(100f)).as("fp4 saturates").isEqualTo(0x7);
        assertThatThrownBy(() -> MinifloatFormat.FLOAT4_E2M1FN.fromFloat(Float.NaN)).isInstanceOf(IllegalArgumentException.class);
        assertThat(MinifloatFormat.FLOAT8_E5M2.fromFloat(1e6f)).as("e5m2 overflows to infinity").isEqualTo(0x7C);
        assertThat(MinifloatFormat.FLOAT8_E4M3FN.fromFloat(1e6f)).as("e4m3fn overflows to NaN").isEqualTo(0x7F);
        assertThat(MinifloatFormat.FLOAT8_E4M3FN.fromFloat(-460f)).as("just above max rounds to max").isEqualTo(0xFE);
        assertThat(MinifloatFormat.FLOAT8_E4M3FNUZ.fromFloat(-0f)).as("fnuz has no negative zero").isZero();
    }

    @Test
    void everyFloat16AndBfloat16PatternDecodesLikeTheReference() {
        Definition binary16 = new Definition(1, 5, 10, 15, "ieee");
        Definition bfloat16 = new Definition(1, 8, 7, 127, "ieee");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment memory = arena.allocate(JAVA_SHORT, 65536);
            for (int code = 0; code < 65536; code++) {
                memory.setAtIndex(JAVA_SHORT, code, (short) code);
            }
            HostTensorView half = HostTensorView.of(memory, DLDataType.FLOAT16, 65536);
            HostTensorView brain = HostTensorView.of(memory, DLDataType.BFLOAT16, 65536);
            for (int code = 0; code < 65536; code++) {
                check(half.getDouble(code), binary16.decode(code), "float16", code);
                check(brain.getDouble(code), bfloat16.decode(code), "bfloat16", code);
            }
            // Writes round to nearest even and read back exactly.
            half.setDouble(0, 1.0 + 0x1p-11);
            assertThat(half.getDouble(0)).isEqualTo(1.0);
            brain.setDouble(1, 1.0 + 0x1p-8 + 0x1p-9);
            assertThat(brain.getDouble(1)).isEqualTo(1.0 + 0x1p-7);
        }
    }

    private static void check(double actual, double expected, String type, int code) {
        if (Double.isNaN(expected)) {
            assertThat(actual).as("%s 0x%04x", type, code).isNaN();
        } else {
            assertThat(actual).as("%s 0x%04x", type, code).isEqualTo(expected);
        }
    }
}
