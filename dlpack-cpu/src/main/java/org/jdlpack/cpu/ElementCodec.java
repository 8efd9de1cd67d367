package org.jdlpack.cpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;

/**
 * Reads and writes the scalar slots of one dtype's elements as raw bits, and converts raw bits to
 * and from Java values. A slot is a lane, or half of a complex lane (complex and bcomplex).
 *
 * <p>Where a slot lives: byte-addressable elements ({@code bits * lanes} a multiple of 8, or
 * sub-byte values padded to whole bytes) start at {@code element * elementBytes}; packed sub-byte
 * elements start at bit {@code element * bits * lanes}, little bit-endian. Slots wider than 64
 * bits (opaque handles of 72 to 248 bits) have no scalar value here and are refused; whole
 * elements of any width are moved by {@link StridedCopy}.
 *
 * <p>Immutable and stateless beyond its dtype: safe on any thread.
 */
final class ElementCodec {

    private final DLDataType dtype;
    private final boolean complex;
    /** Width of one slot in bits. */
    private final int width;
    /** Bytes per element when byte-addressable, 0 for packed sub-byte types. */
    private final long elementBytes;

    ElementCodec(DLDataType dtype, boolean subbytePadded) {
        this.dtype = dtype;
        // bcomplex is complex's layout with bfloat16 parts: read and written as complex values too.
        this.complex = dtype.code() == DLDataTypeCode.COMPLEX || dtype.code() == DLDataTypeCode.BCOMPLEX;
        this.width = complex ? dtype.bits() / 2 : dtype.bits();
        this.elementBytes = dtype.byteSize(subbytePadded);
    }

    /** {@return bytes per element, or 0 for packed sub-byte types} */
    long elementBytes() {
        return elementBytes;
    }

    /** {@return slots per lane: 2 for complex types, else 1} */
    int partsPerLane() {
        return complex ? 2 : 1;
    }

    /**
     * Reads one slot's bits, zero-extended.
     *
     * @param origin  byte offset of element 0 in the segment
     * @param element offset of the element from element 0, in elements
     */
    long read(MemorySegment segment, long origin, long element, int lane, int part) {
        long bit = bitPosition(origin, element, slot(lane, part));
        if ((bit & 7) == 0) {
            long at = bit >>> 3;
            return switch (width) {
                case 8 -> segment.get(JAVA_BYTE, at) & 0xFFL;
                case 16 -> segment.get(JAVA_SHORT_UNALIGNED, at) & 0xFFFFL;
                case 32 -> segment.get(JAVA_INT_UNALIGNED, at) & 0xFFFF_FFFFL;
                case 64 -> segment.get(JAVA_LONG_UNALIGNED, at);
                default -> readBits(segment, bit, width);
            };
        }
        return readBits(segment, bit, width);
    }

    /** Writes one slot's low {@code width} bits; the other bits of shared bytes stay as they are. */
    void write(MemorySegment segment, long origin, long element, int lane, int part, long bits) {
        long bit = bitPosition(origin, element, slot(lane, part));
        if ((bit & 7) == 0) {
            long at = bit >>> 3;
            switch (width) {
                case 8 -> segment.set(JAVA_BYTE, at, (byte) bits);
                case 16 -> segment.set(JAVA_SHORT_UNALIGNED, at, (short) bits);
                case 32 -> segment.set(JAVA_INT_UNALIGNED, at, (int) bits);
                case 64 -> segment.set(JAVA_LONG_UNALIGNED, at, bits);
                default -> writeBits(segment, bit, width, bits);
            }
            return;
        }
        writeBits(segment, bit, width, bits);
    }

    /** Index of a slot within its element, after checking lane, part and width. */
    private int slot(int lane, int part) {
        if (width > 64) {
            throw new UnsupportedOperationException(dtype + " values are " + width + " bits wide; scalar access reads and writes"
                    + " at most 64 bits (copy such elements with copyTo(HostTensorView) or through segment())");
        }
        Objects.checkIndex(lane, dtype.lanes());
        if (part != 0 && !complex) {
            throw new UnsupportedOperationException(dtype + " has no imaginary part");
        }
        return complex ? lane * 2 + part : lane;
    }

    private long bitPosition(long origin, long element, int slot) {
        if (elementBytes > 0) {
            // Whole bytes per slot: exact for byte-wide slots, and the padded form of sub-byte ones.
            return (origin + element * elementBytes + (long) slot * Math.ceilDiv(width, 8)) * 8;
        }
        return origin * 8 + element * dtype.bitsPerElement() + (long) slot * width;
    }

    /** Little bit-endian read of {@code width} (at most 64) bits starting at a bit position. */
    static long readBits(MemorySegment segment, long bitPosition, int width) {
        long firstByte = Math.floorDiv(bitPosition, 8);
        int shift = Math.floorMod(bitPosition, 8);
        int bytes = (shift + width + 7) / 8;
        long value = 0;
        for (int i = 0; i < bytes; i++) {
            long octet = segment.get(JAVA_BYTE, firstByte + i) & 0xFFL;
            int at = 8 * i - shift; // where this byte's bit 0 lands in the value
            value |= at >= 0 ? octet << at : octet >>> -at;
        }
        return width == 64 ? value : value & ((1L << width) - 1);
    }

    /** Little bit-endian write of the low {@code width} (at most 64) bits, read-modify-write per byte. */
    static void writeBits(MemorySegment segment, long bitPosition, int width, long bits) {
        long firstByte = Math.floorDiv(bitPosition, 8);
        int shift = Math.floorMod(bitPosition, 8);
        int bytes = (shift + width + 7) / 8;
        long valueMask = width == 64 ? -1L : (1L << width) - 1;
        for (int i = 0; i < bytes; i++) {
            int at = 8 * i - shift;
            int byteMask = (int) (at >= 0 ? valueMask >>> at : valueMask << -at) & 0xFF;
            int byteBits = (int) (at >= 0 ? bits >>> at : bits << -at) & byteMask;
            long address = firstByte + i;
            int old = segment.get(JAVA_BYTE, address) & 0xFF;
            segment.set(JAVA_BYTE, address, (byte) ((old & ~byteMask) | byteBits));
        }
    }

    /** Raw slot bits as a Java long: sign-extended for int, as stored for uint and handles, 0/1 for bool. */
    long toLong(long raw) {
        return switch (dtype.code()) {
            case INT -> signExtend(raw);
            case UINT, OPAQUE_HANDLE -> raw;
            case BOOL -> raw != 0 ? 1 : 0;
            case FLOAT, BFLOAT, COMPLEX, BCOMPLEX, FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ,
                 FLOAT8_E8M0FNU, FLOAT6_E2M3FN, FLOAT6_E3M2FN, FLOAT4_E2M1FN ->
                    throw new UnsupportedOperationException(dtype + " is not an integer type; use getDouble");
        };
    }

    /** A Java long as raw slot bits (truncated to the width when written); bool stores 1 for non-zero. */
    long fromLong(long value) {
        return switch (dtype.code()) {
            case INT, UINT, OPAQUE_HANDLE -> value;
            case BOOL -> value != 0 ? 1 : 0;
            case FLOAT, BFLOAT, COMPLEX, BCOMPLEX, FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ,
                 FLOAT8_E8M0FNU, FLOAT6_E2M3FN, FLOAT6_E3M2FN, FLOAT4_E2M1FN ->
                    throw new UnsupportedOperationException(dtype + " is not an integer type; use setDouble");
        };
    }

    /** Raw slot bits as a double. */
    double decode(long raw) {
        return switch (dtype.code()) {
            case INT -> signExtend(raw);
            case UINT -> raw >= 0 ? raw : unsignedToDouble(raw);
            case BOOL -> raw != 0 ? 1 : 0;
            case FLOAT, COMPLEX -> switch (width) {
                case 16 -> Float.float16ToFloat((short) raw);
                case 32 -> Float.intBitsToFloat((int) raw);
                default -> Double.longBitsToDouble(raw);
            };
            case BFLOAT, BCOMPLEX -> Float.intBitsToFloat((int) raw << 16);
            case OPAQUE_HANDLE -> throw new UnsupportedOperationException("an opaque handle has no numeric value; use getLong");
            case FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ,
                 FLOAT8_E8M0FNU, FLOAT6_E2M3FN, FLOAT6_E3M2FN, FLOAT4_E2M1FN -> MinifloatFormat.of(dtype.code()).toFloat((int) raw);
        };
    }

    /** A double as raw slot bits: integers truncate towards zero as a C cast does, floats round to nearest. */
    long encode(double value) {
        return switch (dtype.code()) {
            case INT, UINT -> (long) value;
            case BOOL -> value != 0 ? 1 : 0;
            case FLOAT, COMPLEX -> switch (width) {
                case 16 -> Float.floatToFloat16((float) value) & 0xFFFFL;
                case 32 -> Float.floatToRawIntBits((float) value) & 0xFFFF_FFFFL;
                default -> Double.doubleToRawLongBits(value);
            };
            case BFLOAT, BCOMPLEX -> bfloat16(Float.floatToRawIntBits((float) value));
            case OPAQUE_HANDLE -> throw new UnsupportedOperationException("an opaque handle has no numeric value; use setLong");
            case FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ,
                 FLOAT8_E8M0FNU, FLOAT6_E2M3FN, FLOAT6_E3M2FN, FLOAT4_E2M1FN -> MinifloatFormat.of(dtype.code()).fromFloat((float) value);
        };
    }

    private long signExtend(long raw) {
        return width == 64 ? raw : (raw << (64 - width)) >> (64 - width);
    }

    /** A uint64 above 2^63 as the nearest double: halve with a sticky low bit, so rounding is right. */
    private static double unsignedToDouble(long raw) {
        return (double) ((raw >>> 1) | (raw & 1)) * 2.0;
    }

    /** float32 bits to bfloat16 bits, rounding to nearest even, NaN kept NaN. */
    private static long bfloat16(int bits) {
        if ((bits & 0x7F80_0000) == 0x7F80_0000 && (bits & 0x007F_FFFF) != 0) {
            return ((bits >>> 16) | 0x40) & 0xFFFF;
        }
        int rounding = 0x7FFF + ((bits >>> 16) & 1);
        return ((bits + rounding) >>> 16) & 0xFFFF;
    }
}
