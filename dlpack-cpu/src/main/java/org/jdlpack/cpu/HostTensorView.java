package org.jdlpack.cpu;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.UnaryOperator;

import org.jdlpack.abi.DLDataType;
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
 */
public final class HostTensorView extends BulkCopies {

    /**
     * Gives {@link #segment()} a scope that ends with the tensor's memory, where the memory's own
     * outlives it ({@link HostTensorPool}'s blocks), or null where the segment's scope already ends
     * with the memory.
     */
    private final UnaryOperator<MemorySegment> scopeRaw;

    /** {@code segment} holds exactly the bytes the elements reach, element 0 at {@code origin}. */
    private HostTensorView(MemorySegment segment, TensorLayout layout, long origin, Lifetime lifetime) {
        super(segment, layout, origin, lifetime.owner, lifetime.source);
        this.scopeRaw = lifetime.scopeRaw;
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

    /** {@return how this tensor's slots are located and converted} */
    ElementCodec codec() {
        return codec;
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
        if (shape.length == 0) {
            throw new IllegalArgumentException("a 0-d tensor has no rows to slice: " + layout);
        }
        Objects.checkFromToIndex(from, to, shape[0]);
        checkLive();
        long[] sliceShape = shape.clone();
        sliceShape[0] = to - from;
        if (count == 0 || from == to) {
            // No element, so no element 0 to place: the offsets stay, and no stride is multiplied
            // (a zero-size layout's strides may be anything).
            TensorLayout empty = TensorLayout.of(layout.dtype(), sliceShape, strides, layout.byteOffset(), layout.flags());
            return new HostTensorView(segment.asSlice(0, 0), empty, 0, lifetime());
        }
        // Row `from` exists and holds elements, so its offset lies inside the extent: no overflow.
        long skipped = from * strides[0]; // elements, from element 0 to the new element 0; negative for reversed rows
        long skippedBits = codec.elementBytes() > 0 ? skipped * codec.elementBytes() * 8 : skipped * layout.dtype().bitsPerElement();
        if (Math.floorMod(skippedBits, 8) != 0) {
            throw new IllegalArgumentException("row " + from + " of " + layout + " starts at bit " + Math.floorMod(skippedBits, 8)
                    + " of a byte; packed sub-byte rows can be sliced only at whole bytes");
        }
        long skippedBytes = Math.floorDiv(skippedBits, 8);
        // byte_offset relative to the owner's data, as this view's is; where that would be negative
        // (a producer's reversed rows: data points at element 0 and earlier rows lie below it), the
        // slice's own element 0 is its data, byte_offset 0, as a producer would send the slice.
        long sliceOffset = Math.max(0, layout.byteOffset() + skippedBytes);
        TensorLayout slice = TensorLayout.of(layout.dtype(), sliceShape, strides, sliceOffset, layout.flags());
        TensorExtent extent = slice.extent();
        // Placed from this view's origin, never from byte offsets, whose base may differ.
        long start = origin + skippedBytes + extent.startByte();
        return new HostTensorView(segment.asSlice(start, extent.byteSize()), slice, -extent.startByte(), lifetime());
    }

    @Override
    public String toString() {
        return "HostTensorView[" + layout + "]";
    }
}
