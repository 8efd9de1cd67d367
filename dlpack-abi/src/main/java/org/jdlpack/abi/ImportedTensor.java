package org.jdlpack.abi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Cleaner;
import java.util.Arrays;
import java.util.Optional;

import org.jdlpack.abi.internal.LeakTracking;
import org.jdlpack.abi.internal.NativeMemory;

/**
 * A tensor produced by native code and owned by Java: the consumer's side of a DLPack exchange.
 *
 * <p>Importing validated every field and copied the metadata (shape, strides with NULL expanded to
 * compact row-major, dtype, device, {@code byte_offset}, flags) into this object, so the metadata
 * accessors never touch native memory.
 *
 * <h2>Lifetime</h2>
 * The tensor and every segment obtained from it share one {@link MemorySegment.Scope}. When that
 * scope ends the producer's deleter is called, exactly once, and any later access to a segment
 * fails with an {@link IllegalStateException} from the FFM runtime instead of touching freed
 * memory. The scope ends in one of three ways:
 * <ul>
 *   <li>{@link #close()}, for a tensor imported without an arena (it then has a shared arena of its
 *       own);</li>
 *   <li>closing the arena passed to {@link ManagedTensorHandle#importTensor(Arena)};</li>
 *   <li>the Cleaner safety net: a tensor of its own arena that becomes unreachable unclosed is
 *       released after garbage collection and reported as a leak in
 *       {@link DLPackStats#leaksReported()}.</li>
 * </ul>
 *
 * <p>Thread safety: the metadata accessors are safe from any thread. {@link #close()} may be called
 * from any thread; concurrent calls are decided atomically, one wins and the others throw. As with
 * any shared arena, closing fails while another thread is inside a native call that holds one of
 * its segments, and then the tensor stays open. A thread that reads a segment while another thread
 * closes the tensor gets an {@link IllegalStateException}; on JDK 25 the FFM runtime also sets that
 * thread's interrupt status (measured: in about a third of such races).
 */
public final class ImportedTensor implements AutoCloseable {

    private static final VarHandle CLOSED;

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(ImportedTensor.class, "closed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ManagedTensorKind kind;
    private final long address;
    private final ManagedTensorReader.Fields fields;
    private final Arena arena;
    private final boolean ownsArena;
    private final Cleaner.Cleanable cleanable;
    @SuppressWarnings("unused") // accessed through CLOSED
    private volatile boolean closed;

    private ImportedTensor(ManagedTensorKind kind, long address, ManagedTensorReader.Fields fields, Arena arena,
                           boolean ownsArena, Cleaner.Cleanable cleanable) {
        this.kind = kind;
        this.address = address;
        this.fields = fields;
        this.arena = arena;
        this.ownsArena = ownsArena;
        this.cleanable = cleanable;
    }

    /**
     * Imports a {@code DLManagedTensorVersioned*}, taking ownership of it: the same as
     * {@code ManagedTensorHandle.ofVersioned(pointer).importTensor()}, without the handle.
     *
     * @param pointer the struct's address
     * @return the tensor; close it when done
     * @throws InvalidTensorException       if a field is malformed (the deleter has run)
     * @throws UnsupportedVersionException  if the major version is not 1 (the deleter has run)
     * @throws IllegalArgumentException     if the pointer is NULL
     */
    public static ImportedTensor importVersioned(MemorySegment pointer) {
        return take(ManagedTensorKind.VERSIONED, ManagedTensorHandle.checkedAddress(pointer), null);
    }

    /**
     * Imports a {@code DLManagedTensorVersioned*} into a lifetime the caller chooses: closing
     * {@code arena} calls the deleter. With a confined arena this is the fastest import, because
     * closing a confined arena needs no JVM-wide handshake (see docs/benchmarks.md).
     *
     * @param pointer the struct's address
     * @param arena   the lifetime of the tensor and its segments
     * @return the tensor; {@link #close()} is not available, close the arena
     * @throws InvalidTensorException       if a field is malformed (the deleter has run)
     * @throws UnsupportedVersionException  if the major version is not 1 (the deleter has run)
     * @throws IllegalStateException        if the arena is closed (the deleter has run)
     */
    public static ImportedTensor importVersioned(MemorySegment pointer, Arena arena) {
        return take(ManagedTensorKind.VERSIONED, ManagedTensorHandle.checkedAddress(pointer), java.util.Objects.requireNonNull(arena, "arena"));
    }

    /**
     * Imports a legacy {@code DLManagedTensor*}, taking ownership of it: the same as
     * {@code ManagedTensorHandle.ofLegacy(pointer).importTensor()}, without the handle.
     *
     * @param pointer the struct's address
     * @return the tensor; close it when done
     * @throws InvalidTensorException   if a field is malformed (the deleter has run)
     * @throws IllegalArgumentException if the pointer is NULL
     */
    public static ImportedTensor importLegacy(MemorySegment pointer) {
        return take(ManagedTensorKind.LEGACY, ManagedTensorHandle.checkedAddress(pointer), null);
    }

    /**
     * Imports a legacy {@code DLManagedTensor*} into a lifetime the caller chooses; see
     * {@link #importVersioned(MemorySegment, Arena)}.
     *
     * @param pointer the struct's address
     * @param arena   the lifetime of the tensor and its segments
     * @return the tensor; close the arena to release it
     * @throws InvalidTensorException if a field is malformed (the deleter has run)
     * @throws IllegalStateException  if the arena is closed (the deleter has run)
     */
    public static ImportedTensor importLegacy(MemorySegment pointer, Arena arena) {
        return take(ManagedTensorKind.LEGACY, ManagedTensorHandle.checkedAddress(pointer), java.util.Objects.requireNonNull(arena, "arena"));
    }



    /** Takes a pointer whose ownership was already moved here; every failure path calls the deleter. */
    static ImportedTensor take(ManagedTensorKind kind, long address, Arena callerArena) {
        ManagedTensorReader.Fields fields;
        try {
            fields = ManagedTensorReader.read(kind, address);
        } catch (RuntimeException | Error e) {
            Deleters.call(kind, address);
            throw e;
        }
        OwnershipCell cell = new OwnershipCell(kind, address, "ImportedTensor");
        boolean ownsArena = callerArena == null;
        Arena arena = ownsArena ? Arena.ofShared() : callerArena;
        try {
            // The arena's close calls the deleter; the anchor segment only carries that cleanup.
            NativeMemory.at(address, kind.structSize(), arena, anchor -> cell.release());
        } catch (RuntimeException | Error e) {
            cell.release();
            throw e;
        }
        Cleaner.Cleanable cleanable = null;
        if (ownsArena) {
            // Watch the scope, not this object: segments handed out keep the scope reachable, so
            // the Cleaner cannot free memory that a live segment still points to.
            cleanable = LeakTracking.cleaner().register(arena.scope(), OwnershipCell.leakAction(cell,
                    () -> "ImportedTensor(" + kind.structName() + " at 0x" + Long.toHexString(address) + ", " + fields.device()
                            + ", " + fields.dtype() + ", shape " + Arrays.toString(fields.shape()) + ")"));
        }
        return new ImportedTensor(kind, address, fields, arena, ownsArena, cleanable);
    }

    /**
     * Which struct was imported.
     *
     * @return the kind
     */
    public ManagedTensorKind kind() {
        return kind;
    }

    /**
     * The address of the imported struct, for diagnostics.
     *
     * @return the {@code DLManagedTensor(Versioned)*}
     */
    public long managedTensorAddress() {
        return address;
    }

    /**
     * The DLPack version the producer stamped, for a versioned struct.
     *
     * @return the version, or empty for a legacy struct, which has none
     */
    public Optional<DLPackVersion> version() {
        return Optional.ofNullable(fields.version());
    }

    /**
     * The raw flags word, unknown bits included; always 0 for a legacy struct.
     *
     * @return the flags
     */
    public long flags() {
        return fields.flags();
    }

    /**
     * Whether the producer forbids writes ({@link DLTensorFlag#READ_ONLY}). A legacy struct cannot
     * say so and is always writable.
     *
     * @return {@code true} when read-only
     */
    public boolean isReadOnly() {
        return DLTensorFlag.READ_ONLY.isSet(fields.flags());
    }

    /**
     * Where the data lives.
     *
     * @return the device
     */
    public DLDevice device() {
        return fields.device();
    }

    /**
     * The element type.
     *
     * @return the dtype
     */
    public DLDataType dtype() {
        return fields.dtype();
    }

    /**
     * The number of dimensions.
     *
     * @return ndim, 0 for a scalar
     */
    public int ndim() {
        return fields.shape().length;
    }

    /**
     * The extents.
     *
     * @return a copy of the shape
     */
    public long[] shape() {
        return fields.shape().clone();
    }

    /**
     * One extent.
     *
     * @param dimension 0 to {@code ndim() - 1}
     * @return the extent of that dimension
     */
    public long shape(int dimension) {
        return fields.shape()[dimension];
    }

    /**
     * The strides in elements; compact row-major when the producer gave NULL.
     *
     * @return a copy of the strides
     */
    public long[] strides() {
        return fields.strides().clone();
    }

    /**
     * One stride, in elements.
     *
     * @param dimension 0 to {@code ndim() - 1}
     * @return the stride of that dimension
     */
    public long stride(int dimension) {
        return fields.strides()[dimension];
    }

    /**
     * Whether the producer wrote NULL strides (legal before DLPack 1.2).
     *
     * @return {@code true} when the strides were computed here
     */
    public boolean stridesWereNull() {
        return fields.stridesWereNull();
    }

    /**
     * Whether the elements are contiguous in row-major order.
     *
     * @return {@code true} for compact C-order strides
     */
    public boolean isCompactRowMajor() {
        return TensorGeometry.isCompactRowMajor(fields.shape(), fields.strides());
    }

    /**
     * The number of elements.
     *
     * @return the product of the extents
     */
    public long elementCount() {
        return fields.elementCount();
    }

    /**
     * The {@code data} field: a host or device address, or a {@code cl_mem} on OpenCL. May be 0 for
     * a tensor with no elements.
     *
     * @return the raw data pointer
     */
    public long dataAddress() {
        return fields.data();
    }

    /**
     * The {@code byte_offset} field.
     *
     * @return the offset of element 0 from {@code data}, in bytes
     */
    public long byteOffset() {
        return fields.byteOffset();
    }

    /**
     * The bytes the elements reach, relative to {@code data + byte_offset}.
     *
     * @return the extent
     */
    public TensorExtent extent() {
        return fields.extent();
    }

    /**
     * The lifetime shared by this tensor and its segments.
     *
     * @return the scope
     */
    public MemorySegment.Scope scope() {
        return arena.scope();
    }

    /**
     * Whether the tensor is still alive (its deleter has not been called).
     *
     * @return {@code true} until the scope ends
     */
    public boolean isAlive() {
        return arena.scope().isAlive();
    }

    /**
     * The bytes the elements reach, as a segment bounded to exactly {@link #extent()} and bound to
     * this tensor's lifetime. Element 0 is at offset {@code -extent().startByte()} of the segment;
     * with only non-negative strides that is offset 0. The segment is read-only when
     * {@link #isReadOnly()}.
     *
     * @return the data segment; empty (size 0) for a tensor with no elements
     * @throws UnsupportedDeviceException if the CPU cannot address the device's memory
     * @throws IllegalStateException      if the tensor was closed
     */
    public MemorySegment hostSegment() {
        if (!fields.device().isHostAccessible()) {
            throw new UnsupportedDeviceException(fields.device(), "a tensor on " + fields.device()
                    + " has no host-accessible memory; use the device module to copy it");
        }
        if (!isAlive()) {
            throw new IllegalStateException("ImportedTensor already closed");
        }
        TensorExtent extent = fields.extent();
        long start = extent.byteSize() == 0 ? fields.data() : fields.data() + fields.byteOffset() + extent.startByte();
        MemorySegment segment = NativeMemory.at(start, extent.byteSize(), arena, null);
        return isReadOnly() ? segment.asReadOnly() : segment;
    }

    /**
     * Calls the producer's deleter by closing this tensor's own arena. Every segment obtained from
     * the tensor becomes inaccessible.
     *
     * @throws IllegalStateException if already closed; if the tensor lives in an arena the caller
     *                               gave at import (close that arena instead); or if another thread
     *                               is accessing one of its segments right now (the tensor then
     *                               stays open)
     */
    @Override
    public void close() {
        if (!ownsArena) {
            throw new IllegalStateException("this tensor lives as long as the arena given to importTensor(Arena); close that arena");
        }
        if (!CLOSED.compareAndSet(this, false, true)) {
            throw new IllegalStateException("ImportedTensor already closed");
        }
        try {
            arena.close();
        } catch (IllegalStateException e) {
            CLOSED.setVolatile(this, false);
            throw e;
        }
        cleanable.clean(); // already released, so this only unregisters the safety net
    }

    @Override
    public String toString() {
        return "ImportedTensor[" + kind.structName() + version().map(v -> " " + v).orElse("") + ", " + fields.device() + ", "
                + fields.dtype() + ", shape=" + Arrays.toString(fields.shape()) + ", strides=" + Arrays.toString(fields.strides())
                + ", byte_offset=" + fields.byteOffset() + ", flags=0x" + Long.toHexString(fields.flags())
                + (isAlive() ? "" : ", closed") + "]";
    }
}
