package org.jdlpack.libtorch;

import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;

/**
 * The element types an adapter carries in both directions: each DLPack type whose torch
 * {@code ScalarType} libtorch converts with {@code at::toScalarType} and names with a C shim
 * constant function. The torch codes are read from the adapter's libtorch
 * ({@code aoti_torch_dtype_float32()} and so on, see {@link #resolve}) instead of being copied
 * from its headers.
 *
 * <p>Left out everywhere: {@code kDLFloat8_e8m0fnu} (the 2.10 shim has no constant for it), every
 * float8 variant libtorch has no type for, float6 and float4, and lanes other than 1
 * ({@code at::toScalarType} throws for all of them). The four float8 types libtorch names are a
 * parameter: libtorch 2.7.1 has them, but its DLPack header predates their DLPack codes, so its
 * {@code at::toScalarType} throws for them.
 *
 * <p>Immutable; safe from any thread.
 *
 * @since 0.1
 */
public final class TorchDTypes {

    /**
     * One supported type: its DLPack value and the shim function that returns its torch code.
     *
     * @param dlpack           the DLPack type
     * @param constantFunction the shim function returning its {@code ScalarType} code
     */
    public record Entry(DLDataType dlpack, String constantFunction) {
    }

    private static final List<Entry> WITHOUT_FLOAT8 = List.of(
            new Entry(DLDataType.BOOL, "aoti_torch_dtype_bool"),
            new Entry(DLDataType.INT8, "aoti_torch_dtype_int8"),
            new Entry(DLDataType.INT16, "aoti_torch_dtype_int16"),
            new Entry(DLDataType.INT32, "aoti_torch_dtype_int32"),
            new Entry(DLDataType.INT64, "aoti_torch_dtype_int64"),
            new Entry(DLDataType.UINT8, "aoti_torch_dtype_uint8"),
            new Entry(DLDataType.UINT16, "aoti_torch_dtype_uint16"),
            new Entry(DLDataType.UINT32, "aoti_torch_dtype_uint32"),
            new Entry(DLDataType.UINT64, "aoti_torch_dtype_uint64"),
            new Entry(DLDataType.FLOAT16, "aoti_torch_dtype_float16"),
            new Entry(DLDataType.FLOAT32, "aoti_torch_dtype_float32"),
            new Entry(DLDataType.FLOAT64, "aoti_torch_dtype_float64"),
            new Entry(DLDataType.BFLOAT16, "aoti_torch_dtype_bfloat16"),
            new Entry(new DLDataType(DLDataTypeCode.COMPLEX, 32, 1), "aoti_torch_dtype_complex32"),
            new Entry(DLDataType.COMPLEX64, "aoti_torch_dtype_complex64"),
            new Entry(DLDataType.COMPLEX128, "aoti_torch_dtype_complex128"));

    private static final List<Entry> FLOAT8 = List.of(
            new Entry(new DLDataType(DLDataTypeCode.FLOAT8_E4M3FN, 8, 1), "aoti_torch_dtype_float8_e4m3fn"),
            new Entry(new DLDataType(DLDataTypeCode.FLOAT8_E4M3FNUZ, 8, 1), "aoti_torch_dtype_float8_e4m3fnuz"),
            new Entry(new DLDataType(DLDataTypeCode.FLOAT8_E5M2, 8, 1), "aoti_torch_dtype_float8_e5m2"),
            new Entry(new DLDataType(DLDataTypeCode.FLOAT8_E5M2FNUZ, 8, 1), "aoti_torch_dtype_float8_e5m2fnuz"));

    /** The types of a libtorch that converts the DLPack float8 codes (2.10). */
    public static final TorchDTypes WITH_FLOAT8 = new TorchDTypes(Stream.concat(WITHOUT_FLOAT8.stream(), FLOAT8.stream()).toList());
    /** The types of a libtorch whose DLPack header predates the float8 codes (2.7.1). */
    public static final TorchDTypes NO_FLOAT8 = new TorchDTypes(WITHOUT_FLOAT8);

    /** Torch codes are small (c10::ScalarType has fewer than 64 values); a code beyond this is unsupported. */
    private static final int MAX_TORCH_CODE = 128;

    private final List<Entry> entries;

    private TorchDTypes(List<Entry> entries) {
        this.entries = entries;
    }

    /** {@return the supported types, with their shim constant functions} */
    public List<Entry> entries() {
        return entries;
    }

    /**
     * Reads the torch code of every type from the adapter's libtorch.
     *
     * @param shim      the adapter's shim
     * @param exception the adapter's exception, for a code out of range
     * @return the codes
     */
    public Codes resolve(AotiShim shim, Function<String, ? extends RuntimeException> exception) {
        DLDataType[] byTorchCode = new DLDataType[MAX_TORCH_CODE];
        for (Entry entry : entries) {
            int code = shim.constant(entry.constantFunction());
            if (code < 0 || code >= MAX_TORCH_CODE) {
                throw exception.apply(entry.constantFunction() + "() returned " + code + ", not a ScalarType code");
            }
            byTorchCode[code] = entry.dlpack();
        }
        return new Codes(byTorchCode);
    }

    /** The table with the codes of one loaded libtorch. Immutable once made. */
    public static final class Codes {

        private final DLDataType[] byTorchCode;

        private Codes(DLDataType[] byTorchCode) {
            this.byTorchCode = byTorchCode;
        }

        /**
         * {@return the DLPack type of a torch {@code ScalarType} code, or null when the adapter does not carry it}
         *
         * @param torchCode torch's {@code ScalarType} code
         */
        public DLDataType dlpackOf(int torchCode) {
            return torchCode >= 0 && torchCode < MAX_TORCH_CODE ? byTorchCode[torchCode] : null;
        }
    }

    /**
     * {@return the type if {@code at::toScalarType} converts it (and the shim names it), else null}
     *
     * @param code  {@code DLDataType.code}, as stored
     * @param bits  {@code DLDataType.bits}
     * @param lanes {@code DLDataType.lanes}
     */
    public DLDataType supported(int code, int bits, int lanes) {
        for (Entry entry : entries) {
            DLDataType type = entry.dlpack();
            if (type.code().code() == code && type.bits() == bits && type.lanes() == lanes) {
                return type;
            }
        }
        return null;
    }

    /** {@return the supported DLPack types, for messages} */
    public String supportedText() {
        return Arrays.toString(entries.stream().map(Entry::dlpack).toArray());
    }
}
