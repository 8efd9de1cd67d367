package org.jdlpack.cpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Objects;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorExtent;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.UnsupportedDeviceException;

/**
 * A tensor in host-addressable memory, read and written from Java: typed element access for every
 * DLPack data type, and bulk copies, to another tensor and to and from Java arrays of every
 * primitive width. The array copies move raw bits between elements and array values of the same
 * width, in row-major order: one copy when the tensor is compact, else one per contiguous row or
 * per element; they throw {@link IllegalArgumentException} when the widths or the lengths differ.
 *
 * <p>A host tensor is a view: it does not own its memory. It is backed by a {@link MemorySegment}
 * bounded to exactly the bytes its shape, strides and dtype reach, and it lives as long as that
 * segment's scope: after an {@link ImportedTensor} is closed, or a {@link OwnedHostTensor}'s memory is
 * released, every access throws {@link IllegalStateException} instead of touching freed memory.
 *
 * {@snippet :
 * try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, pointer)) {
 *     HostTensorView view = HostTensorView.of(tensor);              // the producer's memory, bounded and typed
 *     float corner = view.getFloatAt(1, 2);                          // element [1, 2], whatever the strides
 *     float[] all = new float[(int) view.layout().elementCount()];
 *     view.copyTo(all);                                              // row-major, one bulk copy when compact
 * }
 * }
 *
 * <h2>Indexing</h2>
 * Elements are addressed by their position in row-major (C) order, {@code 0} to
 * {@code layout().elementCount() - 1}, whatever the strides; {@link #index(long...)} turns a
 * multi-dimensional index into that position. An element has {@code layout().dtype().lanes()} lanes; a
 * complex lane has a real and an imaginary part.
 *
 * <h2>Values</h2>
 * {@link #getDouble(long, int)} decodes every numeric type (integers, IEEE floats, bfloat16,
 * float8/float6/float4 as their published definitions say, the real part of complex, bool as 0 or 1);
 * {@link #getLong(long, int)} reads integer, bool and opaque-handle types exactly (unsigned 64-bit
 * values as their bit pattern). Packed sub-byte types (bits * lanes not a multiple of 8) are
 * located by bit position, little bit-endian, unless the tensor says values are padded to bytes.
 * Data is native-endian. Values wider than 64 bits (opaque handles of 72 bits and more) have no
 * scalar accessor: they throw {@link UnsupportedOperationException}, and travel whole through
 * {@link #copyTo(HostTensorView)} or {@link #segment()}.
 *
 * <p>Thread safety: a host tensor is immutable; reads may run on any number of threads. Writes to
 * the same elements from several threads race as they would on any shared memory. Packed sub-byte
 * writes read-modify-write whole bytes, so concurrent writes to neighbouring packed elements race.
 */
public final class HostTensorView {

    private final MemorySegment segment;
    /** The tensor's layout as its owner gave it: byte_offset relative to the owner's data. */
    private final TensorLayout layout;
    // Copies of the layout's fields that every element access reads.
    private final long[] shape;
    private final long[] strides;
    private final long origin;
    private final long count;
    private final boolean compact;
    private final ElementCodec codec;
    /** What must stay reachable while this view is (the owner of an {@link OwnedHostTensor}'s memory), or null. */
    @SuppressWarnings({"unused", "FieldCanBeLocal"}) // held only for reachability
    private final Object keepAlive;

    /** {@code segment} holds exactly the bytes the elements reach, element 0 at {@code origin}. */
    private HostTensorView(MemorySegment segment, TensorLayout layout, long origin) {
        this(segment, layout, origin, null);
    }

    private HostTensorView(MemorySegment segment, TensorLayout layout, long origin, Object keepAlive) {
        this.keepAlive = keepAlive;
        if (segment.isReadOnly() && !layout.isReadOnly()) {
            layout = layout.withFlags(layout.flags() | DLTensorFlag.READ_ONLY.mask());
        }
        this.segment = segment;
        this.layout = layout;
        this.shape = layout.shape();
        this.strides = layout.strides();
        this.origin = origin;
        this.count = layout.elementCount();
        this.compact = layout.isCompactRowMajor();
        this.codec = new ElementCodec(layout.dtype(), layout.isSubbytePadded());
    }

    /**
     * A view of an imported tensor's memory, for the device types the CPU can address (CPU, CUDA
     * host, ROCm host, CUDA managed). It lives as long as the imported tensor.
     * @param tensor the imported tensor
     * @return the view
     * @throws UnsupportedDeviceException if the device's memory is not host-accessible
     * @throws IllegalStateException      if the tensor is closed
     */
    public static HostTensorView of(ImportedTensor tensor) {
        MemorySegment segment = tensor.hostSegment();
        TensorLayout layout = tensor.layout();
        return new HostTensorView(segment, layout, -layout.extent().startByte());
    }

    /**
     * A view of the memory a spec describes.
     * @param spec a spec on a host-accessible device
     * @return the view
     * @throws UnsupportedDeviceException if the spec's device is not host-accessible
     */
    public static HostTensorView of(TensorSpec spec) {
        if (!spec.device().isHostAccessible()) {
            throw new UnsupportedDeviceException(spec.device(), "a tensor on " + spec.device() + " is not host-accessible");
        }
        return of(spec.data(), spec.layout());
    }

    /**
     * A compact row-major view of a segment that starts with element 0.
     * @param segment native or heap memory holding the elements
     * @param dtype   the element type
     * @param shape   the extents
     * @return the view
     * @throws IllegalArgumentException if the shape is invalid or the elements do not fit in the segment
     */
    public static HostTensorView of(MemorySegment segment, DLDataType dtype, long... shape) {
        return of(segment, TensorLayout.of(dtype, shape));
    }

    /**
     * A view of elements laid out in a segment as {@code layout} says, element 0 at
     * {@code layout.byteOffset()} bytes from the segment's start.
     * @param segment native or heap memory holding the elements
     * @param layout  where the elements lie in it
     * @return the view; read-only when the layout says so or the segment is read-only
     * @throws IllegalArgumentException if the elements reach outside the segment
     */
    public static HostTensorView of(MemorySegment segment, TensorLayout layout) {
        return of(segment, layout, null);
    }

    /** A view of an {@link OwnedHostTensor}'s memory that keeps {@code keepAlive}, its owner, reachable. */
    static HostTensorView of(TensorSpec spec, Object keepAlive) {
        return of(spec.data(), spec.layout(), keepAlive);
    }

    private static HostTensorView of(MemorySegment segment, TensorLayout layout, Object keepAlive) {
        TensorExtent extent = layout.extent();
        if (extent.byteSize() == 0) {
            return new HostTensorView(segment.asSlice(0, 0), layout, 0, keepAlive);
        }
        if (!layout.fitsIn(segment.byteSize())) {
            throw new IllegalArgumentException(layout + " does not fit in a segment of " + segment.byteSize() + " bytes");
        }
        long first = layout.byteOffset() + extent.startByte();
        return new HostTensorView(segment.asSlice(first, extent.byteSize()), layout, -extent.startByte(), keepAlive);
    }

    /**
     * {@return the tensor's layout as its owner describes it ({@code byte_offset} relative to the
     * owner's {@code data}, as {@link ImportedTensor#layout()} and {@link TensorSpec#layout()} say);
     * read-only when writes are refused} Where element 0 lies in {@link #segment()} is
     * {@link #origin()}.
     */
    public TensorLayout layout() {
        return layout;
    }

    /** {@return the offset of element 0 in {@link #segment()}: 0 unless some stride is negative} */
    public long origin() {
        return origin;
    }

    /** {@return the memory the elements occupy, bounded to exactly the reachable bytes (read-only when the tensor is)} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return how this tensor's slots are located and converted} */
    ElementCodec codec() {
        return codec;
    }

    /**
     * The row-major position of a multi-dimensional index.
     * @param indices one index per dimension
     * @return the position, for the element accessors
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public long index(long... indices) {
        if (indices.length != shape.length) {
            throw new IndexOutOfBoundsException(indices.length + " indices for a " + shape.length + "-d tensor");
        }
        long position = 0;
        for (int d = 0; d < shape.length; d++) {
            Objects.checkIndex(indices[d], shape[d]);
            position = position * shape[d] + indices[d];
        }
        return position;
    }

    /** Offset in elements from element 0 of the element at a row-major position. */
    private long elementOffset(long position) {
        Objects.checkIndex(position, count);
        if (compact) {
            return position;
        }
        long offset = 0;
        for (int d = shape.length - 1; d >= 0; d--) {
            offset += (position % shape[d]) * strides[d];
            position /= shape[d];
        }
        return offset;
    }

    private long read(long position, int lane, int part) {
        long offset = elementOffset(position);
        try {
            return codec.read(segment, origin, offset, lane, part);
        } catch (IllegalStateException | WrongThreadException e) {
            throw inaccessible(e);
        }
    }

    private void write(long position, int lane, int part, long bits) {
        StridedCopy.checkWritable(this);
        long offset = elementOffset(position);
        try {
            codec.write(segment, origin, offset, lane, part, bits);
        } catch (IllegalStateException | WrongThreadException e) {
            throw inaccessible(e);
        }
    }

    /**
     * The FFM runtime's refusal of an access to {@link #segment}, said in this library's terms:
     * its own text ("Already closed", "Attempted access outside owning thread") names neither the
     * tensor nor what to do.
     */
    RuntimeException inaccessible(RuntimeException refusal) {
        if (refusal instanceof WrongThreadException) {
            return new WrongThreadException("this HostTensorView (" + layout + ") reads memory confined to another thread: an "
                    + "ImportedTensor with the default lifetime belongs to the thread that imported it; read it there, or import "
                    + "it with ImportLifetime.SHARED (or move it there with ImportedTensor.moveTo) to read it from any thread",
                    refusal);
        }
        if (!segment.scope().isAlive()) {
            return new IllegalStateException("the memory behind this HostTensorView (" + layout + ") was released: its "
                    + "ImportedTensor was closed or moved, or its owner's memory was freed; take views only of live tensors",
                    refusal);
        }
        return refusal;
    }

    // ----- typed access -----
    // Every accessor throws IndexOutOfBoundsException for a position or lane out of range, and
    // UnsupportedOperationException for values wider than 64 bits.

    /**
     * Lane 0 of an element as a double; see {@link #getDouble(long, int)}.
     * @param position the row-major position
     * @return the value
     */
    public double getDouble(long position) {
        return getDouble(position, 0);
    }

    /**
     * One lane of an element as a double: exact for every type except 64-bit integers beyond
     * 2<sup>53</sup>; the real part of a complex lane; 0 or 1 for bool; unsigned types as unsigned.
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @return the value
     * @throws UnsupportedOperationException for opaque handles
     */
    public double getDouble(long position, int lane) {
        return codec.decode(read(position, lane, 0));
    }

    /**
     * The imaginary part of one lane of a complex element.
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @return the imaginary part
     * @throws UnsupportedOperationException if the type is not complex
     */
    public double getImaginary(long position, int lane) {
        return codec.decode(read(position, lane, 1));
    }

    /**
     * Lane 0 of an element as a float; for float32 this is exact and fast.
     * @param position the row-major position
     * @return the value, rounded to float
     */
    public float getFloat(long position) {
        if (layout.dtype().equals(DLDataType.FLOAT32)) {
            long offset = origin + elementOffset(position) * 4;
            try {
                return segment.get(JAVA_FLOAT_UNALIGNED, offset);
            } catch (IllegalStateException | WrongThreadException e) {
                throw inaccessible(e);
            }
        }
        return (float) getDouble(position, 0);
    }

    /**
     * Lane 0 of an integer, bool or handle element; see {@link #getLong(long, int)}.
     * @param position the row-major position
     * @return the value
     */
    public long getLong(long position) {
        return getLong(position, 0);
    }

    /**
     * One lane of an integer, bool or opaque-handle element, exactly: signed types sign-extended,
     * unsigned types zero-extended (a uint64 comes back as its bit pattern; read it with
     * {@link Long#toUnsignedString(long)}).
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @return the value
     * @throws UnsupportedOperationException for floating-point and complex types, and handles wider than 64 bits
     */
    public long getLong(long position, int lane) {
        return codec.toLong(read(position, lane, 0));
    }

    /**
     * Lane 0 of an element as a boolean: non-zero is true.
     * @param position the row-major position
     * @return the value
     */
    public boolean getBoolean(long position) {
        return read(position, 0, 0) != 0;
    }

    /**
     * Lane 0 of the element at a multi-dimensional index, as a float; {@code getFloatAt(i, j)} is
     * {@code getFloat(index(i, j))}. (A two-argument {@code getFloat} would be taken for the
     * lane accessors' {@code (position, lane)}, hence the name.)
     * @param indices one index per dimension
     * @return the value, rounded to float
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public float getFloatAt(long... indices) {
        return getFloat(index(indices));
    }

    /**
     * Lane 0 of the element at a multi-dimensional index, as a double; see {@link #getFloatAt}.
     * @param indices one index per dimension
     * @return the value
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public double getDoubleAt(long... indices) {
        return getDouble(index(indices));
    }

    /**
     * Lane 0 of the integer, bool or handle element at a multi-dimensional index; see {@link #getFloatAt}.
     * @param indices one index per dimension
     * @return the value
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public long getLongAt(long... indices) {
        return getLong(index(indices));
    }

    /**
     * Writes lane 0 of the element at a multi-dimensional index; see {@link #getFloatAt}.
     * @param value   the value
     * @param indices one index per dimension
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public void setFloatAt(float value, long... indices) {
        setFloat(index(indices), value);
    }

    /**
     * Writes lane 0 of the element at a multi-dimensional index; see {@link #getFloatAt}.
     * @param value   the value
     * @param indices one index per dimension
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public void setDoubleAt(double value, long... indices) {
        setDouble(index(indices), value);
    }

    /**
     * Writes lane 0 of the integer, bool or handle element at a multi-dimensional index; see {@link #getFloatAt}.
     * @param value   the value
     * @param indices one index per dimension
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public void setLongAt(long value, long... indices) {
        setLong(index(indices), value);
    }

    /**
     * Writes lane 0 of an element; see {@link #setDouble(long, int, double)}.
     * @param position the row-major position
     * @param value    the value
     */
    public void setDouble(long position, double value) {
        setDouble(position, 0, value);
    }

    /**
     * Writes one lane of an element (the real part for complex types), converting as a C cast
     * would for integers (truncation towards zero) and rounding to nearest for narrower floats.
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @param value    the value
     * @throws UnsupportedOperationException if the tensor is read-only, or for opaque handles
     */
    public void setDouble(long position, int lane, double value) {
        write(position, lane, 0, codec.encode(value));
    }

    /**
     * Writes the imaginary part of one lane of a complex element.
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @param value    the imaginary part
     * @throws UnsupportedOperationException if read-only or not complex
     */
    public void setImaginary(long position, int lane, double value) {
        write(position, lane, 1, codec.encode(value));
    }

    /**
     * Writes lane 0 of an element as a float.
     * @param position the row-major position
     * @param value    the value
     */
    public void setFloat(long position, float value) {
        setDouble(position, 0, value);
    }

    /**
     * Writes lane 0 of an integer, bool or handle element; see {@link #setLong(long, int, long)}.
     * @param position the row-major position
     * @param value    the value, truncated to the type's width
     */
    public void setLong(long position, long value) {
        setLong(position, 0, value);
    }

    /**
     * Writes one lane of an integer, bool or handle element, keeping the low {@code bits} bits
     * (bool stores 1 for any non-zero value).
     * @param position the row-major position
     * @param lane     0 to {@code layout().dtype().lanes() - 1}
     * @param value    the value
     * @throws UnsupportedOperationException if read-only, for floating-point and complex types, and
     *                                       for handles wider than 64 bits
     */
    public void setLong(long position, int lane, long value) {
        write(position, lane, 0, codec.fromLong(value));
    }

    /**
     * Writes lane 0 of an element as a boolean.
     * @param position the row-major position
     * @param value    the value
     */
    public void setBoolean(long position, boolean value) {
        write(position, 0, 0, value ? 1 : 0);
    }

    // ----- bulk copies -----

    /**
     * Copies every element into an array; for 32-bit types ({@code float32}, {@code int32},
     * {@code uint32}) the bits are copied unchanged.
     * @param destination one value per element; 32-bit elements
     */
    public void copyTo(float[] destination) {
        StridedCopy.array(this, destination, JAVA_FLOAT_UNALIGNED, 32, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 64-bit elements
     */
    public void copyTo(double[] destination) {
        StridedCopy.array(this, destination, JAVA_DOUBLE_UNALIGNED, 64, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 32-bit elements
     */
    public void copyTo(int[] destination) {
        StridedCopy.array(this, destination, JAVA_INT_UNALIGNED, 32, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 64-bit elements
     */
    public void copyTo(long[] destination) {
        StridedCopy.array(this, destination, JAVA_LONG_UNALIGNED, 64, false);
    }

    /**
     * Copies every element into an array (raw bits of float16 and bfloat16); see {@link #copyTo(float[])}.
     * @param destination one value per element; 16-bit elements
     */
    public void copyTo(short[] destination) {
        StridedCopy.array(this, destination, JAVA_SHORT_UNALIGNED, 16, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 8-bit elements
     */
    public void copyTo(byte[] destination) {
        StridedCopy.array(this, destination, JAVA_BYTE, 8, false);
    }

    /**
     * Overwrites every element, in row-major order, from an array.
     * @param source one value per element; 32-bit elements
     * @throws UnsupportedOperationException if the tensor is read-only
     */
    public void copyFrom(float[] source) {
        StridedCopy.array(this, source, JAVA_FLOAT_UNALIGNED, 32, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 64-bit elements
     */
    public void copyFrom(double[] source) {
        StridedCopy.array(this, source, JAVA_DOUBLE_UNALIGNED, 64, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 32-bit elements
     */
    public void copyFrom(int[] source) {
        StridedCopy.array(this, source, JAVA_INT_UNALIGNED, 32, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 64-bit elements
     */
    public void copyFrom(long[] source) {
        StridedCopy.array(this, source, JAVA_LONG_UNALIGNED, 64, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 16-bit elements
     */
    public void copyFrom(short[] source) {
        StridedCopy.array(this, source, JAVA_SHORT_UNALIGNED, 16, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 8-bit elements
     */
    public void copyFrom(byte[] source) {
        StridedCopy.array(this, source, JAVA_BYTE, 8, true);
    }


    /**
     * Copies the elements into fresh compact row-major memory from {@code arena}, 256-byte
     * aligned as DLPack recommends.
     * @param arena where the copy lives
     * @return a compact, writable tensor with the same dtype and shape
     */
    public HostTensorView toContiguous(Arena arena) {
        TensorLayout compactLayout = TensorLayout.of(layout.dtype(), shape, null, 0,
                layout.isSubbytePadded() ? DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.mask() : 0);
        HostTensorView copy = new HostTensorView(arena.allocate(compactLayout.extent().byteSize(), 256), compactLayout, 0);
        copyTo(copy);
        return copy;
    }

    /**
     * Copies every element into another tensor of the same dtype and shape, whatever the strides
     * of either and however wide the elements: one bulk copy when both are compact. Overlapping
     * tensors (two views of one buffer, a vector reversed onto itself) are copied as if through a
     * temporary, as NumPy does: every element of the target gets the source's value from before
     * the copy.
     * @param target the destination
     * @throws IllegalArgumentException      if the dtypes or shapes differ
     * @throws UnsupportedOperationException if the target is read-only
     */
    public void copyTo(HostTensorView target) {
        if (!Arrays.equals(shape, target.shape) || !layout.dtype().equals(target.layout.dtype())) {
            throw new IllegalArgumentException("cannot copy " + this + " into " + target + ": dtypes or shapes differ");
        }
        StridedCopy.checkWritable(target);
        StridedCopy.elements(this, target);
    }

    @Override
    public String toString() {
        return "HostTensorView[" + layout + "]";
    }
}
