package org.jdlpack.cpu;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.function.UnaryOperator;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ExportOwner;
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
 * memory: after an {@link ImportedTensor} is closed or moved, or an {@link OwnedHostTensor}'s memory
 * is released (allocated, wrapped or {@link HostTensorPool pooled}: a pooled block stays mapped for
 * its next taker), every access throws {@link IllegalStateException} naming the tensor, instead of
 * touching freed memory or someone else's data; an access from a thread the memory is confined to
 * none of throws {@link WrongThreadException} saying what to do. An import's segment and an
 * allocated tensor's arena end with the memory; a view of an {@code OwnedHostTensor} also checks
 * the tensor's reference count on each access (one volatile read), because a pooled block's
 * segment outlives the tensor. An access racing the release on another thread may still complete,
 * as a read racing any write does: close a tensor only when its users are done.
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
 *
 * <p>The same contract holds for every memory a view is of (an import's, a caller's segment, an
 * allocated, wrapped or pooled {@code OwnedHostTensor}'s): this class keeps the lifetime and
 * thread checks and the messages that name the tensor; the work is done by package-private
 * static helpers that take only the memory and its layout: {@link RowMajor} (positions and row
 * slices), {@link ElementCodec} (one element's slots), {@link StridedCopy} (bulk copies).
 *
 * @since 0.1
 */
public final class HostTensorView {

    /**
     * The elements' memory, unchecked: this package reads it after {@link #checkLive()}
     * ({@link TensorStreams}; {@link OwnedHostTensor} for ONNX Runtime's bridge, under a hold); what the view hands out is
     * {@link #segment()}.
     */
    final MemorySegment segment;
    /**
     * The owner of an {@link OwnedHostTensor}'s memory, whose release every access checks first
     * (a pooled block outlives it, mapped, for the next taker), or null: an import's or a caller's
     * segment, whose own scope ends with the memory.
     */
    private final ExportOwner owner;
    /** What the memory belongs to, for messages (an {@link ImportedTensor}, an {@link OwnedHostTensor}), or null. */
    private final Object source;
    /** The tensor's layout as its owner gave it: byte_offset relative to the owner's data. */
    private final TensorLayout layout;
    // Copies of the layout's fields that every element access reads.
    private final long[] shape;
    private final long[] strides;
    private final long origin;
    private final long count;
    private final boolean compact;
    private final ElementCodec codec;

    /**
     * Gives {@link #segment()} a scope that ends with the tensor's memory, where the memory's own
     * outlives it ({@link HostTensorPool}'s blocks), or null where the segment's scope already ends
     * with the memory.
     */
    private final UnaryOperator<MemorySegment> scopeRaw;

    /** {@code segment} holds exactly the bytes the elements reach, element 0 at {@code origin}. */
    private HostTensorView(MemorySegment segment, TensorLayout layout, long origin, Lifetime lifetime) {
        if (segment.isReadOnly() && !layout.isReadOnly()) {
            layout = layout.withFlags(layout.flags() | DLTensorFlag.READ_ONLY.mask());
        }
        this.segment = segment;
        this.owner = lifetime.owner();
        this.source = lifetime.source();
        this.scopeRaw = lifetime.scopeRaw();
        this.layout = layout;
        this.shape = layout.shape();
        this.strides = layout.strides();
        this.origin = origin;
        this.count = layout.elementCount();
        this.compact = layout.isCompactRowMajor();
        this.codec = new ElementCodec(layout.dtype(), layout.isSubbytePadded());
    }

    /**
     * What a view of some memory checks and names: the owner whose release ends the view (null for
     * an import's or a caller's segment, whose scope ends with the memory), what the memory is (for
     * messages), and how a raw segment of it is scoped.
     */
    record Lifetime(ExportOwner owner, Object source, UnaryOperator<MemorySegment> scopeRaw) {
        /** A caller's segment: its scope is the only lifetime. */
        static final Lifetime SEGMENT = new Lifetime(null, null, null);
    }

    /** {@return how this view scopes the raw segments it hands out, or null; for a slice of its tensor} */
    UnaryOperator<MemorySegment> scopeRaw() {
        return scopeRaw;
    }

    /** {@return this view's lifetime, for a slice of it} */
    private Lifetime lifetime() {
        return owner == null && source == null && scopeRaw == null ? Lifetime.SEGMENT : new Lifetime(owner, source, scopeRaw);
    }

    /** A view with nothing to keep reachable, for this package's copies. */
    static HostTensorView over(MemorySegment segment, TensorLayout layout, long origin) {
        return new HostTensorView(segment, layout, origin, Lifetime.SEGMENT);
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
        return new HostTensorView(segment, layout, -layout.extent().startByte(), new Lifetime(null, tensor, null));
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
        return of(segment, layout, Lifetime.SEGMENT);
    }

    /**
     * A view of an {@link OwnedHostTensor}'s memory: ends with the release of {@code lifetime}'s
     * owner, which it keeps reachable (the safety net watches the owner).
     */
    static HostTensorView of(TensorSpec spec, Lifetime lifetime) {
        return of(spec.data(), spec.layout(), lifetime);
    }

    private static HostTensorView of(MemorySegment segment, TensorLayout layout, Lifetime lifetime) {
        TensorExtent extent = layout.extent();
        if (extent.byteSize() == 0) {
            return new HostTensorView(segment.asSlice(0, 0), layout, 0, lifetime);
        }
        if (!layout.fitsIn(segment.byteSize())) {
            throw new IllegalArgumentException(layout + " does not fit in a segment of " + segment.byteSize() + " bytes");
        }
        long first = layout.byteOffset() + extent.startByte();
        return new HostTensorView(segment.asSlice(first, extent.byteSize()), layout, -extent.startByte(), lifetime);
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

    /**
     * {@return the memory the elements occupy, bounded to exactly the reachable bytes (read-only
     * when the tensor is), in a scope that ends with the memory} Element 0 lies at
     * {@link #origin()}. For an {@link ImportedTensor} the scope is the import's; for an
     * {@link OwnedHostTensor#allocate allocated} tensor, its arena's. A {@link HostTensorPool}
     * block outlives its tensor (it is the next taker's), so the first call on a pooled tensor's
     * view gives that tensor a shared arena of its own, for its raw segments only: their scope ends
     * at the tensor's release, and that arena's close then costs the release the JVM-wide
     * handshake the pool otherwise avoids (tens of microseconds; benchmarks/notes.md). The
     * accessors, copies, {@link #rows} and {@link TensorStreams} need no raw segment and never pay
     * it. For a {@link OwnedHostTensor#wrap wrapped} tensor this is the caller's segment, whose
     * scope is the caller's.
     *
     * @throws IllegalStateException if the tensor's memory was released
     */
    public MemorySegment segment() {
        checkLive();
        return scopeRaw == null ? segment : scopeRaw.apply(segment);
    }

    /**
     * Rows {@code from} (inclusive) to {@code to} (exclusive) of dimension 0, as a view of the same
     * memory: no copy, the same strides, the same lifetime (it keeps what this view keeps). Writes
     * through either view are seen by the other. A batch's rows, one request's share of them:
     * {@snippet :
     * HostTensorView batch = tensor.host();                     // [rows, 16]
     * HostTensorView mine = batch.rows(first, first + count);   // [count, 16], element 0 is batch row `first`
     * float x = mine.getFloatAt(0, 3);                           // batch element [first, 3]
     * }
     * The slice's {@link #layout()} keeps {@code byte_offset} relative to the owner's {@code data}:
     * this view's offset plus the rows skipped; where that is negative (rows that run backwards
     * from an element 0 at {@code data}, as producers send reversed arrays), {@code byte_offset} is
     * 0 and the slice's element 0 stands for its {@code data}. Either way, element 0 lies at
     * {@link #origin()} in {@link #segment()}.
     *
     * @param from the first row, 0 to {@code to}
     * @param to   one past the last row, {@code from} to {@code layout().shape(0)}
     * @return the view of those rows; read-only if this one is
     * @throws IllegalArgumentException  if the tensor is 0-d, or the first row starts inside a byte
     *                                   (packed sub-byte values whose row is not a whole number of bytes)
     * @throws IndexOutOfBoundsException if {@code from} or {@code to} is out of range
     * @throws IllegalStateException     if the tensor's memory was released
     */
    public HostTensorView rows(long from, long to) {
        RowMajor.Rows rows = RowMajor.rows(layout, origin, codec.elementBytes(), from, to);
        checkLive();
        return new HostTensorView(segment.asSlice(rows.start(), rows.byteSize()), rows.layout(), rows.origin(), lifetime());
    }

    // ----- the lifetime and thread checks, and the names in their messages -----

    /**
     * Refuses an access once an {@link OwnedHostTensor}'s memory is released. Its segment cannot
     * say so: a pooled block stays mapped, in the pool's arena, and is the next taker's (a scope
     * per take would make every release a JVM-wide handshake; benchmarks/notes.md, "Views of
     * released pooled tensors"). One volatile read of the owner's reference count: an access
     * sequenced after the release throws; one that races the release on another thread may still
     * complete, as a read racing any write does.
     *
     * @throws IllegalStateException naming the tensor, if its memory was released
     */
    void checkLive() {
        if (owner != null && owner.isReleased()) {
            throw released(null);
        }
    }

    /** {@return what this view is of, for messages: the tensor, or the view and its layout} */
    String name() {
        return source != null ? "this HostTensorView of " + source : "this HostTensorView (" + layout + ")";
    }

    private IllegalStateException released(RuntimeException refusal) {
        return new IllegalStateException(name() + " was released: the view reads nothing after its tensor is closed (with "
                + "every export deleted), moved, or its memory freed; use a view only while its tensor is open, and an export "
                + "to keep the memory for a consumer", refusal);
    }

    /**
     * The FFM runtime's refusal of an access to {@link #segment}, said in this library's terms:
     * its own text ("Already closed", "Attempted access outside owning thread") names neither the
     * tensor nor what to do. Callers catch the JDK's exceptions around the access, which costs
     * nothing until one is thrown.
     */
    RuntimeException inaccessible(RuntimeException refusal) {
        if (refusal instanceof WrongThreadException) {
            String what = source instanceof ImportedTensor
                    ? "an ImportedTensor with the default lifetime belongs to the thread that imported it; read it there, or "
                      + "import it with ImportLifetime.SHARED (or move it there with ImportedTensor.moveTo) to read it from any "
                      + "thread"
                    : "its segment's arena is confined to the thread that made it; use the view there, or allocate the memory "
                      + "in a shared arena (an ImportedTensor: import it with ImportLifetime.SHARED)";
            return new WrongThreadException(name() + " reads memory confined to another thread: " + what, refusal);
        }
        if ((owner != null && owner.isReleased()) || !segment.scope().isAlive()) {
            return released(refusal);
        }
        return refusal;
    }

    // ----- typed access -----
    // Every accessor throws IndexOutOfBoundsException for a position or lane out of range, and
    // UnsupportedOperationException for values wider than 64 bits.

    /**
     * The row-major position of a multi-dimensional index.
     * @param indices one index per dimension
     * @return the position, for the element accessors
     * @throws IndexOutOfBoundsException if the count or any index is out of range
     */
    public long index(long... indices) {
        return RowMajor.position(shape, indices);
    }

    /** Offset in elements from element 0 of the element at a row-major position. */
    private long elementOffset(long position) {
        return RowMajor.elementOffset(position, count, compact, shape, strides);
    }

    /** One slot's bits, after the owner check; the FFM runtime's refusal said with the tensor's name. */
    private long read(long position, int lane, int part) {
        long offset = elementOffset(position);
        checkLive();
        try {
            return codec.read(segment, origin, offset, lane, part);
        } catch (IllegalStateException | WrongThreadException e) {
            throw inaccessible(e);
        }
    }

    /** Writes one slot's bits, after the read-only and owner checks; see {@link #read}. */
    private void write(long position, int lane, int part, long bits) {
        StridedCopy.checkWritable(layout);
        long offset = elementOffset(position);
        checkLive();
        try {
            codec.write(segment, origin, offset, lane, part, bits);
        } catch (IllegalStateException | WrongThreadException e) {
            throw inaccessible(e);
        }
    }

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
        return layout.dtype().equals(DLDataType.FLOAT32) ? readFloat32(position) : (float) getDouble(position, 0);
    }

    /** A float32 element read straight from the segment: the common case, without the codec's slot arithmetic. */
    private float readFloat32(long position) {
        long offset = origin + elementOffset(position) * 4;
        checkLive();
        try {
            return segment.get(JAVA_FLOAT_UNALIGNED, offset);
        } catch (IllegalStateException | WrongThreadException e) {
            throw inaccessible(e);
        }
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
        arrayCopy(destination, JAVA_FLOAT_UNALIGNED, 32, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 64-bit elements
     */
    public void copyTo(double[] destination) {
        arrayCopy(destination, JAVA_DOUBLE_UNALIGNED, 64, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 32-bit elements
     */
    public void copyTo(int[] destination) {
        arrayCopy(destination, JAVA_INT_UNALIGNED, 32, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 64-bit elements
     */
    public void copyTo(long[] destination) {
        arrayCopy(destination, JAVA_LONG_UNALIGNED, 64, false);
    }

    /**
     * Copies every element into an array (raw bits of float16 and bfloat16); see {@link #copyTo(float[])}.
     * @param destination one value per element; 16-bit elements
     */
    public void copyTo(short[] destination) {
        arrayCopy(destination, JAVA_SHORT_UNALIGNED, 16, false);
    }

    /**
     * Copies every element into an array; see {@link #copyTo(float[])}.
     * @param destination one value per element; 8-bit elements
     */
    public void copyTo(byte[] destination) {
        arrayCopy(destination, JAVA_BYTE, 8, false);
    }

    /**
     * Overwrites every element, in row-major order, from an array.
     * @param source one value per element; 32-bit elements
     * @throws UnsupportedOperationException if the tensor is read-only
     */
    public void copyFrom(float[] source) {
        arrayCopy(source, JAVA_FLOAT_UNALIGNED, 32, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 64-bit elements
     */
    public void copyFrom(double[] source) {
        arrayCopy(source, JAVA_DOUBLE_UNALIGNED, 64, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 32-bit elements
     */
    public void copyFrom(int[] source) {
        arrayCopy(source, JAVA_INT_UNALIGNED, 32, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 64-bit elements
     */
    public void copyFrom(long[] source) {
        arrayCopy(source, JAVA_LONG_UNALIGNED, 64, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 16-bit elements
     */
    public void copyFrom(short[] source) {
        arrayCopy(source, JAVA_SHORT_UNALIGNED, 16, true);
    }

    /**
     * Overwrites every element from an array; see {@link #copyFrom(float[])}.
     * @param source one value per element; 8-bit elements
     */
    public void copyFrom(byte[] source) {
        arrayCopy(source, JAVA_BYTE, 8, true);
    }


    /**
     * Copies the elements into fresh compact row-major memory from {@code arena}, 256-byte
     * aligned as DLPack recommends.
     * @param arena where the copy lives
     * @return a compact, writable tensor with the same dtype and shape
     */
    public HostTensorView toContiguous(Arena arena) {
        StridedCopy.Elements memory = StridedCopy.compact(layout, arena);
        HostTensorView copy = over(memory.segment(), memory.layout(), memory.origin());
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
        StridedCopy.checkWritable(target.layout);
        checkLive();
        target.checkLive();
        try {
            StridedCopy.elements(elements(), target.elements());
        } catch (IllegalStateException | WrongThreadException e) {
            boolean sourceRefused = !segment.scope().isAlive() || !segment.isAccessibleBy(Thread.currentThread());
            throw (sourceRefused ? this : target).inaccessible(e);
        }
    }

    /** {@return this view's memory as a copy reads it} */
    private StridedCopy.Elements elements() {
        return new StridedCopy.Elements(segment, origin, layout, codec);
    }

    /** Moves every element between this tensor and {@code array}, after the owner check; see {@link StridedCopy#array}. */
    private void arrayCopy(Object array, ValueLayout valueLayout, int javaBits, boolean intoTensor) {
        checkLive();
        try {
            StridedCopy.array(elements(), array, valueLayout, javaBits, intoTensor);
        } catch (IllegalStateException | WrongThreadException e) {
            throw inaccessible(e);
        }
    }

    @Override
    public String toString() {
        return "HostTensorView[" + layout + "]";
    }
}
