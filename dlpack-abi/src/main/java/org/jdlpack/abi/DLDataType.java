package org.jdlpack.abi;

/**
 * The type of one tensor element: the {@code DLDataType} struct ({@code code} u8, {@code bits} u8,
 * {@code lanes} u16).
 *
 * <p>An element is {@code lanes} values of {@code bits} bits each. Elements narrower than a byte
 * ({@code bits * lanes} not a multiple of 8) are packed, little bit-endian, unless the tensor's
 * {@link DLTensorFlag#IS_SUBBYTE_TYPE_PADDED} flag says each value occupies whole bytes.
 *
 * <p>Every instance is a valid combination (see {@link DLDataTypeCode#allowsBits(int)}); instances
 * are immutable and safe to share between threads.
 *
 * @param code  the type code
 * @param bits  bits per value, 1 to 255
 * @param lanes values per element, 1 to 65535
 *
 * @since 0.1
 */
public record DLDataType(DLDataTypeCode code, int bits, int lanes) {

    /** {@code int8}. */
    public static final DLDataType INT8 = new DLDataType(DLDataTypeCode.INT, 8, 1);
    /** {@code int16}. */
    public static final DLDataType INT16 = new DLDataType(DLDataTypeCode.INT, 16, 1);
    /** {@code int32}. */
    public static final DLDataType INT32 = new DLDataType(DLDataTypeCode.INT, 32, 1);
    /** {@code int64}. */
    public static final DLDataType INT64 = new DLDataType(DLDataTypeCode.INT, 64, 1);
    /** {@code uint8}. */
    public static final DLDataType UINT8 = new DLDataType(DLDataTypeCode.UINT, 8, 1);
    /** {@code uint16}. */
    public static final DLDataType UINT16 = new DLDataType(DLDataTypeCode.UINT, 16, 1);
    /** {@code uint32}. */
    public static final DLDataType UINT32 = new DLDataType(DLDataTypeCode.UINT, 32, 1);
    /** {@code uint64}. */
    public static final DLDataType UINT64 = new DLDataType(DLDataTypeCode.UINT, 64, 1);
    /** {@code float16} (IEEE binary16). */
    public static final DLDataType FLOAT16 = new DLDataType(DLDataTypeCode.FLOAT, 16, 1);
    /** {@code float32}. */
    public static final DLDataType FLOAT32 = new DLDataType(DLDataTypeCode.FLOAT, 32, 1);
    /** {@code float64}. */
    public static final DLDataType FLOAT64 = new DLDataType(DLDataTypeCode.FLOAT, 64, 1);
    /** {@code bfloat16}. */
    public static final DLDataType BFLOAT16 = new DLDataType(DLDataTypeCode.BFLOAT, 16, 1);
    /** {@code complex64}: two float32. */
    public static final DLDataType COMPLEX64 = new DLDataType(DLDataTypeCode.COMPLEX, 64, 1);
    /** {@code complex128}: two float64. */
    public static final DLDataType COMPLEX128 = new DLDataType(DLDataTypeCode.COMPLEX, 128, 1);
    /** {@code bcomplex32}: two bfloat16, real part first ({@code kDLBcomplex}, dlpack's main after v1.3). */
    public static final DLDataType BCOMPLEX32 = new DLDataType(DLDataTypeCode.BCOMPLEX, 32, 1);
    /** {@code bool}, one byte per value. */
    public static final DLDataType BOOL = new DLDataType(DLDataTypeCode.BOOL, 8, 1);

    /**
     * Checks the combination is valid.
     *
     * @throws IllegalArgumentException naming the field and value that make it invalid
     * @throws NullPointerException     if {@code code} is null
     */
    public DLDataType {
        String problem = problem(code.code(), bits, lanes);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /**
     * Decodes the three raw fields of a {@code DLDataType} as read from native memory.
     *
     * @param rawCode  the {@code code} byte
     * @param rawBits  the {@code bits} byte
     * @param rawLanes the {@code lanes} short
     * @return the data type
     * @throws InvalidTensorException naming the field ({@code DLTensor.dtype.code}, {@code .bits} or
     *                                {@code .lanes}) when the combination is not valid
     */
    public static DLDataType fromRaw(byte rawCode, byte rawBits, short rawLanes) {
        int code = Byte.toUnsignedInt(rawCode);
        int bits = Byte.toUnsignedInt(rawBits);
        int lanes = Short.toUnsignedInt(rawLanes);
        String problem = problem(code, bits, lanes);
        if (problem != null) {
            throw new InvalidTensorException(problem);
        }
        return new DLDataType(DLDataTypeCode.of(code).orElseThrow(), bits, lanes);
    }

    private static String problem(int code, int bits, int lanes) {
        var known = DLDataTypeCode.of(code);
        if (known.isEmpty()) {
            // "1.3": the header on dlpack's main, kDLBcomplex included, still says minor version 3.
            return "DLTensor.dtype.code is " + code + ", not a DLPack 1.3 type code (0 to " + (DLDataTypeCode.values().length - 1) + ")";
        }
        if (bits <= 0 || bits > 255) {
            return "DLTensor.dtype.bits is " + bits + ", must be 1 to 255";
        }
        if (lanes <= 0 || lanes > 0xFFFF) {
            return "DLTensor.dtype.lanes is " + lanes + ", must be 1 to 65535";
        }
        if (!known.get().allowsBits(bits)) {
            return "DLTensor.dtype.bits is " + bits + ", impossible for type code " + known.get();
        }
        return null;
    }

    /** {@return the bits one element occupies when packed: {@code bits * lanes}} */
    public long bitsPerElement() {
        return (long) bits * lanes;
    }

    /**
     * {@return whether an element is narrower than a whole number of bytes ({@code bits * lanes} is
     * not a multiple of 8), so that elements share bytes unless the tensor says they are padded}
     */
    public boolean isSubByte() {
        return bitsPerElement() % 8 != 0;
    }

    /**
     * Bytes one element occupies when elements are byte-addressable.
     *
     * @param subbytePadded whether {@link DLTensorFlag#IS_SUBBYTE_TYPE_PADDED} is set; then each
     *                      value is stored in {@code ceil(bits / 8)} bytes
     * @return the element size in bytes, or 0 for a packed sub-byte type
     */
    public long byteSize(boolean subbytePadded) {
        if (!isSubByte()) {
            return bitsPerElement() / 8;
        }
        return subbytePadded ? (long) Math.ceilDiv(bits, 8) * lanes : 0;
    }

    /**
     * The C field values as a compact name, for messages: {@code float32}, {@code int4},
     * {@code float32x4} for four lanes.
     *
     * @return a readable name
     */
    @Override
    public String toString() {
        String base = switch (code) {
            case INT -> "int" + bits;
            case UINT -> "uint" + bits;
            case FLOAT -> "float" + bits;
            case BFLOAT -> "bfloat" + bits;
            case COMPLEX -> "complex" + bits;
            case BCOMPLEX -> "bcomplex" + bits;
            case BOOL -> bits == 8 ? "bool" : "bool" + bits;
            case OPAQUE_HANDLE -> "handle" + bits;
            case FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, FLOAT8_E4M3FN, FLOAT8_E4M3FNUZ, FLOAT8_E5M2, FLOAT8_E5M2FNUZ,
                 FLOAT8_E8M0FNU, FLOAT6_E2M3FN, FLOAT6_E3M2FN, FLOAT4_E2M1FN -> code.name().toLowerCase(java.util.Locale.ROOT);
        };
        return lanes == 1 ? base : base + "x" + lanes;
    }
}
