package org.jdlpack.tensorflow;

import java.util.List;

import org.jdlpack.abi.DLDataType;
import org.tensorflow.proto.DataType;

/**
 * The element types both directions carry: each DLPack type that TensorFlow 2.18 converts
 * ({@code TFE_HandleFromDLPack} takes it) and that TensorFlow Java 1.1.0 has a tensor class for
 * ({@code TFloat32}, {@code TInt64}, ...). The {@code TF_DataType} codes come from TensorFlow Java's
 * own {@link DataType} enum, not copied from headers.
 *
 * <p>Left out: int8, int16, uint32, uint64 and complex types (TensorFlow converts them, but
 * TensorFlow Java 1.1.0 has no tensor class to return them as), strings, resources and variants
 * (no DLPack type), lanes other than 1 (TensorFlow ignores lanes: it would read a vector type as
 * its scalar).
 *
 * <p>Stateless; safe from any thread.
 */
final class TensorFlowDTypes {

    /** One supported type: its DLPack value and TensorFlow's. */
    record Entry(DLDataType dlpack, DataType tensorFlow) {
    }

    static final List<Entry> ENTRIES = List.of(
            new Entry(DLDataType.FLOAT32, DataType.DT_FLOAT),
            new Entry(DLDataType.FLOAT64, DataType.DT_DOUBLE),
            new Entry(DLDataType.FLOAT16, DataType.DT_HALF),
            new Entry(DLDataType.BFLOAT16, DataType.DT_BFLOAT16),
            new Entry(DLDataType.INT32, DataType.DT_INT32),
            new Entry(DLDataType.INT64, DataType.DT_INT64),
            new Entry(DLDataType.UINT8, DataType.DT_UINT8),
            new Entry(DLDataType.UINT16, DataType.DT_UINT16),
            new Entry(DLDataType.BOOL, DataType.DT_BOOL));

    private TensorFlowDTypes() {
    }

    /** {@return the DLPack type of a {@code TF_DataType} code, or null when this adapter does not carry it} */
    static DLDataType dlpackOf(int tensorFlowCode) {
        for (Entry entry : ENTRIES) {
            if (entry.tensorFlow().getNumber() == tensorFlowCode) {
                return entry.dlpack();
            }
        }
        return null;
    }

    /** {@return the type if it is carried, else null} */
    static DLDataType supported(int code, int bits, int lanes) {
        for (Entry entry : ENTRIES) {
            DLDataType type = entry.dlpack();
            if (type.code().code() == code && type.bits() == bits && type.lanes() == lanes) {
                return type;
            }
        }
        return null;
    }

    /** {@return the name of a {@code TF_DataType} code, for messages} */
    static String nameOf(int tensorFlowCode) {
        DataType type = DataType.forNumber(tensorFlowCode);
        return type != null ? type.name() : "TF_DataType " + tensorFlowCode;
    }

    /** {@return the supported DLPack types, for messages} */
    static String supportedText() {
        return ENTRIES.stream().map(e -> e.dlpack().toString()).toList().toString();
    }
}
