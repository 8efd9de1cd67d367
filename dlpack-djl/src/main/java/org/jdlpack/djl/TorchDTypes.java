package org.jdlpack.djl;

import java.util.Arrays;
import java.util.List;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;

/**
 * The element types both directions carry: each DLPack type whose torch {@code ScalarType}
 * libtorch 2.7.1 converts with {@code at::toScalarType} and names with a C shim constant function.
 * The torch codes are read from libtorch ({@code aoti_torch_dtype_float32()} and so on) instead of
 * being copied from its headers. bfloat16 is tagged from torch's own code, so a DJL
 * {@code BFLOAT16} array leaves as DLPack (bfloat, 16, 1).
 *
 * <p>Left out: the float8 types (libtorch 2.7.1 has them, but its DLPack header predates their
 * DLPack codes: {@code at::toScalarType} throws), float6 and float4, and lanes other than 1.
 *
 * <p>Immutable once resolved; safe from any thread.
 */
final class TorchDTypes {

    /** One supported type: its DLPack value and the shim function that returns its torch code. */
    record Entry(DLDataType dlpack, String constantFunction) {
    }

    static final List<Entry> ENTRIES = List.of(
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

    /** Torch codes are small (c10::ScalarType has fewer than 64 values); a code beyond this is unsupported. */
    private static final int MAX_TORCH_CODE = 128;

    private final DLDataType[] byTorchCode = new DLDataType[MAX_TORCH_CODE];

    private TorchDTypes() {
    }

    /** {@return the table, with the codes of the loaded libtorch} */
    static TorchDTypes resolve() {
        TorchDTypes types = new TorchDTypes();
        for (Entry entry : ENTRIES) {
            int code = LibTorch.constant(entry.constantFunction());
            if (code < 0 || code >= MAX_TORCH_CODE) {
                throw new DjlUnavailableException(entry.constantFunction() + "() returned " + code + ", not a ScalarType code");
            }
            types.byTorchCode[code] = entry.dlpack();
        }
        return types;
    }

    /** {@return the DLPack type of a torch {@code ScalarType} code, or null when this adapter does not carry it} */
    DLDataType dlpackOf(int torchCode) {
        return torchCode >= 0 && torchCode < MAX_TORCH_CODE ? byTorchCode[torchCode] : null;
    }

    /** {@return the type if {@code at::toScalarType} converts it (and the shim names it), else null} */
    static DLDataType supported(int code, int bits, int lanes) {
        for (Entry entry : ENTRIES) {
            DLDataType type = entry.dlpack();
            if (type.code().code() == code && type.bits() == bits && type.lanes() == lanes) {
                return type;
            }
        }
        return null;
    }

    /** {@return the supported DLPack types, for messages} */
    static String supportedText() {
        return Arrays.toString(ENTRIES.stream().map(Entry::dlpack).toArray());
    }
}
