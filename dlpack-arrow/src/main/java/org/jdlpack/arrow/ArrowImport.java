package org.jdlpack.arrow;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.BaseRepeatedValueVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.cpu.HostTensorView;

/**
 * DLPack tensors taken into Arrow vectors, zero-copy where the tensor's layout is Arrow's.
 *
 * {@snippet :
 * try (ImportedVector column = ArrowImport.into(allocator).named("embedding")
 *         .importTensor(ManagedTensorKind.VERSIONED, pointer)) {   // a C producer's [rows, 768] float32
 *     FixedSizeListVector rows = (FixedSizeListVector) column.vector();  // over the producer's memory
 *     System.out.println(column.copyReason().orElse("zero-copy"));
 * }                                           // the producer's deleter runs once Arrow releases the memory
 * }
 *
 * <p>A CPU tensor (or one in other host-accessible memory) that is compact row-major, 1-D or more,
 * of a type Arrow has ({@code int8..64}, {@code uint8..64}, {@code float16/32/64}), becomes a vector
 * whose value buffer is the tensor's memory, wrapped through Arrow's
 * {@link org.apache.arrow.memory.ForeignAllocation}: a 1-D tensor a fixed-width vector, a 2-D one a
 * {@code FixedSizeListVector} of rows (and so on per dimension). The allocator counts the tensor's
 * bytes while Arrow holds them. The producer's deleter runs exactly once, when the last Arrow
 * buffer over the memory is released, on whichever thread releases it. Arrow Java still allocates
 * an all-valid validity bitmap per vector (one bit per value).
 *
 * <p>Otherwise the values are copied into memory from the allocator, the deleter runs during the
 * import, and {@link ImportedVector#copyReason()} says why: the tensor is strided, or read-only
 * ({@code READ_ONLY}; Arrow vectors are writable), or of a type Arrow lacks that converts exactly
 * (bool to a Bit vector, bfloat16 and the 8/6/4-bit floats to float32, sub-byte integers to 8-bit
 * ones). With {@link #zeroCopyOnly()} such tensors are refused instead. Complex numbers, opaque
 * handles, vector lanes and device memory are always refused. Every refusal releases the tensor.
 *
 * <h2>Lifetime</h2>
 * Importing takes ownership of the managed tensor. Its memory is held with a lifetime that any
 * thread may end ({@code ImportLifetime.SHARED}: the thread that closes the last vector, or a
 * native thread inside the deleter of a tensor re-exported from the vector), so ending it costs a
 * JVM-wide handshake once per import. A tensor already imported moves into the vector
 * ({@link #importTensor(ImportedTensor)}) and is dead for its old owner. A vector leaked without being closed still releases the
 * tensor once the garbage collector finds it unreachable, but Arrow's allocator keeps counting its
 * bytes.
 *
 * <p>Instances are immutable and may be used from any thread, as the allocator allows.
 *
 * @since 0.1
 */
public final class ArrowImport {

    private static final System.Logger LOG = System.getLogger(ArrowImport.class.getName());

    private final BufferAllocator allocator;
    private final String name;
    private final boolean zeroCopyOnly;

    private ArrowImport(BufferAllocator allocator, String name, boolean zeroCopyOnly) {
        this.allocator = allocator;
        this.name = name;
        this.zeroCopyOnly = zeroCopyOnly;
    }

    /**
     * Imports into vectors of {@code allocator}, named "tensor", copying where the layout needs it.
     *
     * @param allocator accounts for the tensor's memory and allocates validity bitmaps and copies
     * @return the import settings
     */
    public static ArrowImport into(BufferAllocator allocator) {
        return new ArrowImport(Objects.requireNonNull(allocator, "allocator"), "tensor", false);
    }

    /**
     * Names the outermost vector (its field name).
     *
     * @param vectorName the name
     * @return settings with that name
     */
    public ArrowImport named(String vectorName) {
        return new ArrowImport(allocator, Objects.requireNonNull(vectorName, "vectorName"), zeroCopyOnly);
    }

    /** {@return settings that never copy: they refuse, instead of copying, any tensor that cannot be wrapped as it is} */
    public ArrowImport zeroCopyOnly() {
        return new ArrowImport(allocator, name, true);
    }

    /**
     * Imports a {@code DLManagedTensorVersioned*} or {@code DLManagedTensor*}, taking ownership of
     * it. Whatever the outcome, the producer's deleter runs exactly once: now if the import fails
     * or copies, else when the vector's memory is released.
     *
     * @param kind    which struct {@code pointer} points to
     * @param pointer the struct
     * @return the vector
     * @throws org.jdlpack.abi.InvalidTensorException if a field is malformed
     * @throws IllegalArgumentException naming the field, if the tensor has no Arrow form (or needs a
     *                                  copy and {@link #zeroCopyOnly()} was chosen)
     */
    public ImportedVector importTensor(ManagedTensorKind kind, MemorySegment pointer) {
        // A lifetime any thread may end: the last Arrow buffer over it may be released on any
        // thread, including a native one inside a deleter.
        return importOwned(ImportedTensor.of(kind, pointer, ImportLifetime.SHARED));
    }

    /**
     * Imports a Java export not yet handed on (such as {@link ArrowExport#export()}'s), which is
     * consumed. Whatever the outcome, the export's deleter runs exactly once: now if the import
     * fails or copies, else when the vector's memory is released.
     *
     * @param export the export
     * @return the vector
     * @throws IllegalArgumentException as {@link #importTensor(ManagedTensorKind, MemorySegment)} does
     * @throws IllegalStateException    if the export was already consumed or closed
     */
    public ImportedVector importTensor(ExportedTensor export) {
        return importOwned(export.importTensor(ImportLifetime.SHARED));
    }

    /**
     * Imports a tensor already imported into Java, such as one from
     * {@code org.jdlpack.python.PythonRuntime.importTensor}, moving its ownership to the vector
     * ({@link ImportedTensor#moveTo}): the tensor you pass is dead afterwards. Its {@code close()}
     * does nothing (so try-with-resources and {@code ImportedTensor.apply} stay safe), its
     * accessors say it was moved, and segments obtained from it before the call are inaccessible,
     * so nothing but the vector can reach the memory, which lives until the vector's last buffer
     * is released, on any thread. Whatever the outcome, the producer's deleter runs exactly once:
     * now if the import fails or copies, else when the vector's memory is released.
     *
     * <p>The move follows {@link ImportedTensor#moveTo}'s rules: call it on the importing thread
     * of a confined tensor. A tensor imported into a caller's arena ({@code ImportLifetime.in}) is
     * refused, as closing that arena would free memory the vector still points at.
     *
     * @param tensor the tensor, alive; a zero-copy vector wraps its memory
     * @return the vector
     * @throws IllegalStateException    if the tensor was closed or moved, lives in a caller's arena,
     *                                  or cannot move now (left untouched)
     * @throws WrongThreadException     if the tensor is confined to another thread (left untouched)
     * @throws IllegalArgumentException as {@link #importTensor(ManagedTensorKind, MemorySegment)} does
     */
    public ImportedVector importTensor(ImportedTensor tensor) {
        // Arrow reads the memory through raw addresses, outside the FFM checks: only the vector may
        // end the memory's life, on whichever thread drops the last buffer.
        return importOwned(Objects.requireNonNull(tensor, "tensor").moveTo(ImportLifetime.SHARED));
    }

    /** Imports a tensor this import now owns: closes it now on failure or copy, else hands it to Arrow. */
    private ImportedVector importOwned(ImportedTensor tensor) {
        TensorLayout layout = tensor.layout();
        long[] shape = layout.shape();
        ArrowType leafType;
        String copyReason;
        try {
            checkShape(tensor, shape);
            DLDataType dtype = layout.dtype();
            Optional<ArrowType> same = ArrowTypes.sameLayout(dtype);
            if (same.isPresent()) {
                leafType = same.get();
                copyReason = !layout.isCompactRowMajor()
                        ? "the tensor is not compact row-major (shape " + Arrays.toString(shape) + ", strides "
                                + Arrays.toString(layout.strides()) + "); its values were copied into a compact vector"
                        : layout.isReadOnly()
                                ? "the tensor is READ_ONLY and Arrow vectors are writable; its values were copied"
                                : null;
            } else {
                leafType = ArrowTypes.convertedType(dtype).orElseThrow(() -> new IllegalArgumentException(
                        "DLTensor.dtype is " + dtype + ", which has no Arrow vector type"));
                copyReason = dtype + " has no Arrow vector type with the same layout; its values were converted exactly to "
                        + leafType + ", a copy";
            }
            if (copyReason != null && zeroCopyOnly) {
                throw new IllegalArgumentException("zero-copy import refused: " + copyReason.substring(0, copyReason.indexOf(';')));
            }
        } catch (RuntimeException | Error e) {
            tensor.close();
            throw e;
        }

        long count = layout.elementCount();
        ArrowBuf data;
        if (copyReason == null && count > 0) {
            long address = tensor.dataAddress() + layout.byteOffset();
            TensorAllocation allocation = new TensorAllocation(tensor, address, layout.extent().byteSize());
            try {
                data = allocator.wrapForeignAllocation(allocation);
            } catch (RuntimeException | Error e) {
                // Arrow releases the allocation itself on some failures (not when the allocator is full).
                allocation.releaseUnlessReleased();
                throw e;
            }
        } else {
            try {
                data = copyOf(tensor, leafType, count);
            } finally {
                tensor.close();
            }
            if (copyReason != null) {
                LOG.log(Level.DEBUG, copyReason);
            }
        }
        try {
            return new ImportedVector(assemble(leafType, shape, data), Optional.ofNullable(copyReason));
        } finally {
            data.close(); // the vector took its own reference
        }
    }

    private static void checkShape(ImportedTensor tensor, long[] shape) {
        if (!tensor.device().isHostAccessible()) {
            throw new IllegalArgumentException("DLTensor.device is " + tensor.device()
                    + ": Arrow vectors live in host memory; copy the tensor to the CPU first");
        }
        if (shape.length == 0) {
            throw new IllegalArgumentException("DLTensor.ndim is 0: an Arrow column needs at least one dimension, its rows");
        }
        long entries = 1;
        for (int d = 0; d < shape.length; d++) {
            entries = Math.multiplyExact(entries, shape[d]);
            if (entries > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("DLTensor.shape is " + Arrays.toString(shape) + ": an Arrow vector holds at most "
                        + Integer.MAX_VALUE + " values, and dimensions 0.." + d + " make " + entries);
            }
        }
    }

    /** Copies the tensor, in row-major order, into a compact buffer of {@code leafType}'s layout. */
    private ArrowBuf copyOf(ImportedTensor tensor, ArrowType leafType, long count) {
        DLDataType target = ArrowTypes.dtypeOf(leafType);
        boolean bits = leafType instanceof ArrowType.Bool;
        long bytes = bits ? (count + 7) / 8 : count * (target.bits() / 8);
        ArrowBuf copy = allocator.buffer(bytes);
        try {
            if (count == 0) {
                return copy;
            }
            copy.setZero(0, bytes);
            MemorySegment into = ArrowMemory.segmentAt(copy.memoryAddress(), bytes);
            HostTensorView source = HostTensorView.of(tensor);
            if (bits) {
                for (long i = 0; i < count; i++) {
                    if (source.getBoolean(i)) {
                        into.set(ValueLayout.JAVA_BYTE, i >>> 3, (byte) (into.get(ValueLayout.JAVA_BYTE, i >>> 3) | (1 << (i & 7))));
                    }
                }
            } else if (target.equals(source.layout().dtype())) {
                source.copyTo(HostTensorView.of(into, target, source.layout().shape()));
            } else {
                HostTensorView values = HostTensorView.of(into, target, count);
                boolean integral = leafType instanceof ArrowType.Int;
                for (long i = 0; i < count; i++) {
                    if (integral) {
                        values.setLong(i, source.getLong(i));
                    } else {
                        values.setDouble(i, source.getDouble(i));
                    }
                }
            }
            return copy;
        } catch (RuntimeException | Error e) {
            copy.close();
            throw e;
        }
    }

    /** Builds the vector, FixedSizeList levels outermost, over {@code data}; takes its own reference on it. */
    private FieldVector assemble(ArrowType leafType, long[] shape, ArrowBuf data) {
        Field field = new Field(shape.length == 1 ? name : BaseRepeatedValueVector.DATA_VECTOR_NAME, FieldType.nullable(leafType), null);
        for (int d = shape.length - 1; d >= 1; d--) {
            field = new Field(d == 1 ? name : BaseRepeatedValueVector.DATA_VECTOR_NAME,
                    FieldType.nullable(new ArrowType.FixedSizeList(Math.toIntExact(shape[d]))), List.of(field));
        }
        FieldVector vector = field.createVector(allocator);
        try {
            FieldVector level = vector;
            long entries = shape[0];
            for (int d = 1; d < shape.length; d++) {
                FixedSizeListVector list = (FixedSizeListVector) level;
                list.loadFieldBuffers(new ArrowFieldNode(entries, 0), Collections.singletonList(null));
                entries *= shape[d];
                level = list.getDataVector();
            }
            // No validity buffer and no nulls: Arrow allocates an all-valid bitmap.
            List<ArrowBuf> buffers = new ArrayList<>(2);
            buffers.add(null);
            buffers.add(data);
            level.loadFieldBuffers(new ArrowFieldNode(entries, 0), buffers);
            return vector;
        } catch (RuntimeException | Error e) {
            vector.close();
            throw e;
        }
    }

    @Override
    public String toString() {
        return "ArrowImport[into " + allocator.getName() + ", named " + name + (zeroCopyOnly ? ", zero-copy only" : "") + "]";
    }
}
