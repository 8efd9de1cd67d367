package org.jdlpack.arrow;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Objects;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BitVectorHelper;
import org.apache.arrow.vector.ValueVector;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.cpu.HostTensorView;

/**
 * An Arrow vector exported as a DLPack tensor, zero-copy where Arrow's layout is the tensor's.
 *
 * {@snippet :
 * try (Float4Vector scores = new Float4Vector("score", allocator)) {
 *     // ... scores filled, value count set ...
 *     ExportedTensor tensor = ArrowExport.of(scores).readOnly().export(); // a 1-D float32 tensor over the value buffer
 *     nativeLibrary.consume(tensor.consume());   // the deleter, when the consumer calls it, gives Arrow its buffer back
 * }                                              // closing the vector first is safe
 * }
 *
 * <ul>
 *   <li>A fixed-width vector ({@code TinyInt}, {@code SmallInt}, {@code Int}, {@code BigInt}, the
 *       {@code UInt} vectors, {@code Float2}, {@code Float4}, {@code Float8}) becomes a 1-D tensor
 *       of its value count whose {@code data} is the vector's value buffer, which for a slice made
 *       by a transfer pair already points at the slice's first value.</li>
 *   <li>A {@code FixedSizeListVector} of such a vector becomes a 2-D tensor, rows x list size (a
 *       list of lists, 3-D, and so on).</li>
 *   <li>A {@code BitVector} is bit-packed, which DLPack's bool is not: it is exported as a copy,
 *       one byte per value, with {@code IS_COPIED} set.</li>
 *   <li>Decimal, variable-width and other vectors are refused with the reason.</li>
 *   <li>A tensor cannot hold nulls: a vector with nulls is refused with their count, unless
 *       {@link #fillNullsWith(double)} was chosen; then a filled copy is exported with
 *       {@code IS_COPIED} set.</li>
 * </ul>
 *
 * <h2>Lifetime</h2>
 * Each export holds a reference on the Arrow buffer it points into, taken through the buffer's
 * reference manager, and drops it when the consumer calls the deleter, on whatever thread that is.
 * So closing the vector while a consumer holds the tensor is safe: the memory stays allocated (and
 * counted by the vector's allocator) until the deleter runs. Close the allocator only after every
 * consumer is done: Arrow refuses to close an allocator that still has memory outstanding. Each
 * export gives the consumer a fresh struct, which it may keep and free independently.
 *
 * <p>Exports share the vector's memory: values written through the tensor show in the vector and
 * the other way round. Do not write to the vector while a consumer reads, or mark the export
 * {@link #readOnly()} to tell a consumer not to write.
 *
 * <p>Instances are immutable and may be used from any thread; exporting reads the vector, so it
 * must not run while another thread modifies or closes that vector (Arrow vectors are not
 * thread-safe).
 *
 * @since 0.1
 */
public final class ArrowExport {

    private final ValueVector vector;
    private final boolean readOnly;
    private final boolean fillNulls;
    private final double fill;

    private ArrowExport(ValueVector vector, boolean readOnly, boolean fillNulls, double fill) {
        this.vector = vector;
        this.readOnly = readOnly;
        this.fillNulls = fillNulls;
        this.fill = fill;
    }

    /**
     * Starts an export of {@code vector}: writable, and refused if the vector has nulls.
     *
     * @param vector a fixed-width vector, or a FixedSizeList column of one
     * @return the export, not yet made
     */
    public static ArrowExport of(ValueVector vector) {
        return new ArrowExport(Objects.requireNonNull(vector, "vector"), false, false, 0);
    }

    /**
     * {@return a read-only export of the same vector: {@code READ_ONLY} is set in the versioned
     * struct, and a legacy export, which cannot say so, is refused}
     */
    public ArrowExport readOnly() {
        return new ArrowExport(vector, true, fillNulls, fill);
    }

    /**
     * Exports a vector with nulls anyway, as a copy with every null (a null value, or every value
     * of a null row) replaced by {@code value}, converted to the column's type (integers take its
     * integral part; Bit takes {@code value != 0}). A vector without nulls is still exported
     * without copying.
     *
     * @param value what nulls become
     * @return an export of the same vector that fills nulls
     */
    public ArrowExport fillNullsWith(double value) {
        return new ArrowExport(vector, readOnly, true, value);
    }

    /**
     * Exports the vector as a fresh {@code DLManagedTensorVersioned}.
     *
     * @return a handle owning the struct; hand it on with {@link ExportedTensor#consume()}
     * @throws IllegalArgumentException naming the vector, if its type has no tensor form, or if it
     *                                  has nulls and no fill value was chosen
     */
    public ExportedTensor export() {
        return export(ExportOptions.VERSIONED);
    }

    /**
     * Exports the vector as {@code options} say. A legacy {@code DLManagedTensor} has no flags: a
     * copy cannot be marked as one, and a read-only export is refused.
     *
     * @param options the struct kind, how {@code byte_offset} is written, read-only
     * @return a handle owning the struct
     * @throws IllegalArgumentException as {@link #export()} does, or if a read-only export is asked
     *                                  for as a legacy struct
     */
    public ExportedTensor export(ExportOptions options) {
        if (readOnly && options.kind() == ManagedTensorKind.LEGACY) {
            throw new IllegalArgumentException("a read-only export cannot be a legacy DLManagedTensor, which has no flags; "
                    + "export it versioned");
        }
        ColumnLayout layout = ColumnLayout.of(vector);
        long[] nulls = layout.nullCounts();
        boolean hasNulls = Arrays.stream(nulls).anyMatch(n -> n > 0);
        if (hasNulls && !fillNulls) {
            throw new IllegalArgumentException(layout.nullMessage(nulls));
        }
        long flags = readOnly ? DLTensorFlag.READ_ONLY.mask() : 0;
        if (hasNulls || layout.isBitPacked()) {
            return exportCopy(options, layout, hasNulls, flags | DLTensorFlag.IS_COPIED.mask());
        }
        BaseFixedWidthVector leaf = layout.leaf();
        ArrowBuf values = leaf.getDataBuffer();
        long bytes = layout.valueBytes();
        if (values.capacity() < bytes) {
            throw new IllegalStateException(ColumnLayout.describe(leaf) + " claims " + layout.elementCount()
                    + " values but its value buffer has only " + values.capacity() + " bytes");
        }
        TensorSpec spec = TensorSpec.builder(ArrowMemory.segmentAt(values.memoryAddress(), bytes), layout.dtype(), layout.shape())
                .flags(flags).build();
        // The export's reference; the deleter drops it. Arrow's reference counts are atomic, so any thread may.
        values.getReferenceManager().retain();
        return exportOnce(options, spec, values, () -> values.getReferenceManager().release());
    }

    /**
     * Exports {@code spec} once. {@code release} runs exactly once, from whichever thread calls the
     * consumer's deleter (or now, if the export fails); {@code keepAlive} stays reachable until then.
     */
    private static ExportedTensor exportOnce(ExportOptions options, TensorSpec spec, Object keepAlive, Runnable release) {
        ExportOwner owner = ExportOwner.of(keepAlive, release);
        try {
            // Arrow's buffers are addressed directly, with byte_offset 0: folding changes nothing here.
            return owner.export(spec, options);
        } finally {
            owner.close(); // the export, if made, now holds the only reference
        }
    }

    /** Exports a compact copy in a buffer of the vector's own allocator: unpacked bits, filled nulls. */
    private ExportedTensor exportCopy(ExportOptions options, ColumnLayout layout, boolean fillingNulls, long flags) {
        BaseFixedWidthVector leaf = layout.leaf();
        long count = layout.elementCount();
        ArrowBuf copy = leaf.getAllocator().buffer(Math.max(1, layout.valueBytes()));
        try {
            MemorySegment target = ArrowMemory.segmentAt(copy.memoryAddress(), layout.valueBytes());
            if (layout.isBitPacked()) {
                ArrowBuf bits = leaf.getDataBuffer();
                boolean filler = fill != 0;
                for (long i = 0; i < count; i++) {
                    boolean value = fillingNulls && layout.isNull(i) ? filler : BitVectorHelper.get(bits, Math.toIntExact(i)) != 0;
                    target.set(ValueLayout.JAVA_BYTE, i, value ? (byte) 1 : (byte) 0);
                }
            } else {
                MemorySegment.copy(ArrowMemory.segmentAt(leaf.getDataBuffer().memoryAddress(), layout.valueBytes()), 0, target, 0,
                        layout.valueBytes());
                fillNulls(HostTensorView.of(target, layout.dtype(), count), layout);
            }
            TensorSpec spec = TensorSpec.builder(target, layout.dtype(), layout.shape()).flags(flags).build();
            return exportOnce(options, spec, copy, copy::close);
        } catch (RuntimeException | Error e) {
            if (copy.getReferenceManager().getRefCount() > 0) {
                copy.close();
            }
            throw e;
        }
    }

    private void fillNulls(HostTensorView values, ColumnLayout layout) {
        DLDataType dtype = layout.dtype();
        boolean integral = dtype.code() == DLDataTypeCode.INT || dtype.code() == DLDataTypeCode.UINT;
        for (long i = 0; i < layout.elementCount(); i++) {
            if (layout.isNull(i)) {
                if (integral) {
                    values.setLong(i, (long) fill);
                } else {
                    values.setDouble(i, fill);
                }
            }
        }
    }

    @Override
    public String toString() {
        return "ArrowExport[" + ColumnLayout.describe(vector) + (readOnly ? ", read-only" : "")
                + (fillNulls ? ", nulls filled with " + fill : "") + "]";
    }
}
