package org.jdlpack.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.plumbing.OwnerName;
import org.jdlpack.cpu.internal.HostMemory;

/**
 * A Java-owned tensor in host memory that can be exported to native consumers without copying.
 *
 * <p>The memory is reference counted (see {@link ExportOwner}): this object holds one reference
 * until {@link #close()}, every export holds one until its consumer calls the deleter, every
 * {@link #retain()} one until its handle is closed, and the memory is freed when the last
 * reference goes, on whichever thread that is. Closing early is
 * therefore safe: a consumer that still holds an export keeps reading valid memory. A closed
 * tensor exports nothing more: every {@code export} after {@link #close()} throws
 * {@link IllegalStateException}, even while earlier exports are live. After the memory is freed,
 * {@link #host()} views throw {@link IllegalStateException} on access.
 *
 * <p>Memory allocated here comes from a shared arena, 256-byte aligned as the DLPack header
 * recommends, and zeroed.
 *
 * <p>A tensor that becomes unreachable without {@link #close()} (and with no export live: a live
 * export keeps it) is released by the safety net after garbage collection, counted in
 * {@link org.jdlpack.abi.DLPackStats#leaksReported()} and logged as a leak, with its creation site
 * when leak tracking is on ({@code -Dorg.jdlpack.leakTracking=true}). Until its memory is
 * released it counts in {@link org.jdlpack.abi.DLPackStats#liveExportOwners()}. A
 * {@link #host()} view keeps the tensor reachable; a {@link MemorySegment} taken from it or from
 * {@link #spec()} does not: keep the tensor or its view while you use one. After the release the
 * view refuses every access, whatever kind of memory it is ({@link HostTensorView}); so does a
 * segment from {@link HostTensorView#segment()} or {@link #spec()}, except a {@link #wrap wrapped}
 * tensor's, which is the caller's.
 *
 * {@snippet :
 * try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4, 5, 6}, 2, 3)) {
 *     tensor.host().setFloat(5, 60f);                         // write from Java
 *     nativeLibrary.consume(tensor.export().consume());       // the library reads the same memory, no copy
 * }                                                           // freed once the library has called the deleter
 * }
 *
 * <p>Thread safety: every method may be called from any thread. Element reads and writes through
 * {@link #host()} follow {@link HostTensorView}'s rules.
 *
 * @since 0.1
 */
public final class OwnedHostTensor implements AutoCloseable {

    /** The alignment of memory allocated here, in bytes. */
    public static final long ALIGNMENT = 256;

    static {
        // For ONNX Runtime's bridge, which hands memory this tensor owns to ONNX Runtime under a
        // retain of its own, and makes tensors over the outputs ONNX Runtime allocated: not public API.
        HostMemory.install(tensor -> tensor.host.segment, OwnedHostTensor::overForeignMemory);
    }

    private final TensorSpec spec;
    private final ExportOwner owner;
    private final HostTensorView host;
    /** Whether the memory is the caller's ({@link #wrap}): its arena may close whatever this tensor's references say. */
    private final boolean wrapped;
    /** Scopes the raw segments handed out ({@link #spec()}, {@link HostTensorView#segment()}), or null where the memory's scope is theirs. */
    private final UnaryOperator<MemorySegment> scopeRaw;

    private OwnedHostTensor(TensorSpec spec, ExportOwner owner, boolean wrapped) {
        this(spec, owner, wrapped, null);
    }

    /** {@code scopeRaw}: scopes the raw segments {@link HostTensorView#segment()} hands out, where the memory's own scope outlives it. */
    private OwnedHostTensor(TensorSpec spec, ExportOwner owner, boolean wrapped, UnaryOperator<MemorySegment> scopeRaw) {
        this.spec = spec;
        this.owner = owner;
        this.host = HostTensorView.of(spec, new HostTensorView.Lifetime(owner, this, scopeRaw));
        this.wrapped = wrapped;
        this.scopeRaw = scopeRaw;
    }

    /**
     * What the owner keeps reachable until it is released (the arena or the wrapped segment), and
     * the name its messages and leak reports give it: this tensor's, which the user holds.
     */
    private record Memory(Object memory, TensorSpec spec) implements OwnerName {
        @Override
        public String ownerName() {
            return "OwnedHostTensor[" + spec + "]";
        }
    }

    /**
     * Allocates a zeroed, compact row-major tensor.
     *
     * @param dtype the element type
     * @param shape the extents
     * @return the tensor, holding the Java side's reference
     * @throws IllegalArgumentException if a dimension is negative or the size overflows
     */
    public static OwnedHostTensor allocate(DLDataType dtype, long... shape) {
        return allocate(TensorLayout.of(dtype, shape));
    }

    private static OwnedHostTensor allocate(TensorLayout layout) {
        Arena arena = Arena.ofShared();
        MemorySegment data;
        try {
            data = arena.allocate(layout.extent().byteSize(), ALIGNMENT);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
        TensorSpec spec = TensorSpec.builder(data, layout).build();
        return new OwnedHostTensor(spec, ExportOwner.of(new Memory(arena, spec), arena::close), false);
    }

    /**
     * Wraps existing host memory without copying. {@code release} runs once, from any thread, when
     * this tensor is closed and every export of it has been deleted (or, for a tensor forgotten
     * unclosed, on the safety net's thread after garbage collection). {@code release} must not
     * refer to this tensor: it would keep the tensor reachable and the safety net could not release
     * it. The memory must stay valid until {@code release} runs: native consumers read it through
     * raw addresses, and this tensor's references (its exports) cannot keep memory alive that it
     * does not own; closing the segment's arena first leaves every export pointing at freed
     * memory. {@link #ownsMemory()} is false for such a tensor: dlpack-onnxruntime copies a wrapped
     * input once and refuses a wrapped output rather than hand ONNX Runtime memory it cannot hold;
     * a C consumer of an export has no such guard.
     *
     * @param spec    the memory and its layout, on a host-accessible device
     * @param release frees the memory, or does nothing if someone else owns it
     * @return the tensor
     * @throws IllegalArgumentException if the spec is not host-accessible
     */
    public static OwnedHostTensor wrap(TensorSpec spec, Runnable release) {
        if (!spec.device().isHostAccessible()) {
            throw new IllegalArgumentException("an OwnedHostTensor needs host-accessible memory, not " + spec.device());
        }
        return over(spec, release, true, null);
    }

    /** A tensor over {@code spec}'s memory, which {@code release} frees; {@code wrapped}: whether something else may free it first. */
    private static OwnedHostTensor over(TensorSpec spec, Runnable release, boolean wrapped, UnaryOperator<MemorySegment> scopeRaw) {
        return new OwnedHostTensor(spec, ExportOwner.of(new Memory(spec.data(), spec), Objects.requireNonNull(release, "release")),
                wrapped, scopeRaw);
    }

    /**
     * A tensor over memory that only {@code release} frees ({@link HostTensorPool}'s blocks): like
     * {@link #wrap(MemorySegment, DLDataType, long[], Runnable)}, but the memory counts as this
     * tensor's own, as {@link #allocate}'s does, because nothing else can free it while this
     * tensor or an export of it holds a reference. So consumers that must otherwise hold a wrapped
     * segment's scope for each use (dlpack-onnxruntime's runs) need not: the reference suffices.
     * {@code scopeRaw} gives the raw segments of {@link #host()} a scope that ends at the release,
     * where {@code data}'s own outlives it (a pooled block), or is null.
     */
    static OwnedHostTensor overMemoryOnlyReleaseFrees(MemorySegment data, DLDataType dtype, long[] shape, Runnable release,
                                                      UnaryOperator<MemorySegment> scopeRaw) {
        return over(TensorSpec.of(data, dtype, shape), release, false, scopeRaw);
    }

    /**
     * A tensor over memory another library allocated and frees only when {@code release} runs
     * ({@link HostMemory#owning}): owned as a pooled block is, its raw segments scoped to end at
     * the release, before {@code release} frees the memory (which it then does not, if a call in
     * progress still holds one).
     */
    private static OwnedHostTensor overForeignMemory(MemorySegment data, DLDataType dtype, long[] shape, Runnable release) {
        Objects.requireNonNull(release, "release");
        RawScope raw = new RawScope("its memory was given back to the library that allocated it");
        return overMemoryOnlyReleaseFrees(data, dtype, shape, () -> {
            raw.end(); // throws, and release() does not run, while a call still holds a raw segment
            release.run();
        }, raw);
    }

    /**
     * Wraps a compact row-major segment without copying; see {@link #wrap(TensorSpec, Runnable)}.
     *
     * @param data    native memory holding the elements from its first byte
     * @param dtype   the element type
     * @param shape   the extents
     * @param release frees the memory
     * @return the tensor
     */
    public static OwnedHostTensor wrap(MemorySegment data, DLDataType dtype, long[] shape, Runnable release) {
        return wrap(TensorSpec.of(data, dtype, shape), release);
    }

    /**
     * A float32 tensor holding a copy of the values.
     *
     * @param values the elements in row-major order
     * @param shape  the extents; their product must equal the number of values
     * @return the tensor
     */
    public static OwnedHostTensor copyOf(float[] values, long... shape) {
        return filled(DLDataType.FLOAT32, shape, host -> host.copyFrom(values));
    }

    /**
     * A float64 tensor holding a copy of the values.
     *
     * @param values the elements in row-major order
     * @param shape  the extents
     * @return the tensor
     */
    public static OwnedHostTensor copyOf(double[] values, long... shape) {
        return filled(DLDataType.FLOAT64, shape, host -> host.copyFrom(values));
    }

    /**
     * An int32 tensor holding a copy of the values.
     *
     * @param values the elements in row-major order
     * @param shape  the extents
     * @return the tensor
     */
    public static OwnedHostTensor copyOf(int[] values, long... shape) {
        return filled(DLDataType.INT32, shape, host -> host.copyFrom(values));
    }

    /**
     * An int64 tensor holding a copy of the values.
     *
     * @param values the elements in row-major order
     * @param shape  the extents
     * @return the tensor
     */
    public static OwnedHostTensor copyOf(long[] values, long... shape) {
        return filled(DLDataType.INT64, shape, host -> host.copyFrom(values));
    }

    /**
     * A compact copy of any host tensor, in memory owned by the new tensor.
     *
     * @param source the tensor to copy
     * @return the copy
     */
    public static OwnedHostTensor copyOf(HostTensorView source) {
        return filled(source.layout().dtype(), source.layout().shape(), source::copyTo);
    }

    /** A fresh compact tensor whose elements {@code fill} writes; closed if {@code fill} throws. */
    private static OwnedHostTensor filled(DLDataType dtype, long[] shape, Consumer<HostTensorView> fill) {
        OwnedHostTensor tensor = allocate(dtype, shape);
        try {
            fill.accept(tensor.host);
        } catch (RuntimeException | Error e) {
            tensor.close();
            throw e;
        }
        return tensor;
    }

    /** {@return a view for reading and writing elements from Java, valid while the memory lives} */
    public HostTensorView host() {
        return host;
    }

    /**
     * Rows {@code from} (inclusive) to {@code to} (exclusive) of dimension 0 as a tensor of their
     * own over the same memory: exportable and closable on its own, without a copy. It holds a
     * reference on this tensor's memory until it is closed and its own exports are deleted, so
     * either may be closed first. For handing one request's rows of a batch to a consumer:
     * {@snippet :
     * try (OwnedHostTensor batch = pool.take(DLDataType.FLOAT32, 64, 16);
     *      OwnedHostTensor mine = batch.rows(8, 12)) {             // [4, 16], batch rows 8 to 11
     *     nativeLibrary.consume(mine.export().consume());          // data points at batch row 8
     * }
     * }
     * Its reference is a {@link #retain()} of this tensor, given back at the slice's release (a
     * forgotten slice is released by the safety net, which gives it back too). For reading or
     * writing rows from Java alone, {@link HostTensorView#rows} costs less: no owner of its own.
     *
     * @param from the first row
     * @param to   one past the last row
     * @return the rows, holding the Java side's reference; close it
     * @throws IllegalArgumentException  as {@link HostTensorView#rows}
     * @throws IndexOutOfBoundsException if {@code from} or {@code to} is out of range
     * @throws IllegalStateException     if this tensor was closed
     */
    public OwnedHostTensor rows(long from, long to) {
        // First the reference (a closed tensor says so), then the slice (a bad range closes it again).
        ExportOwner.Retained hold = owner.retain(); // this tensor's memory, for as long as the slice or its exports live
        try {
            TensorLayout rows = host.rows(from, to).layout();
            TensorSpec slice = TensorSpec.builder(spec.data(), rows).device(spec.device()).build();
            // A slice of wrapped memory is wrapped memory too; a pooled block's raw segments keep its scoping.
            return new OwnedHostTensor(slice, ExportOwner.of(new Memory(hold, slice), hold::close), wrapped, host.scopeRaw());
        } catch (RuntimeException | Error e) {
            hold.close();
            throw e;
        }
    }

    /**
     * {@return the spec: the memory and layout this tensor exports} Its data segment is inaccessible
     * from the release on, as {@link HostTensorView#segment()}'s is: for a {@link HostTensorPool}
     * tensor it is the block in a scope of the tensor's own, made at the first call and closed at the
     * release (a JVM-wide handshake then; ask {@link #layout()} and {@link #device()} where those
     * are all you need). A {@link #wrap wrapped} tensor's is the caller's segment.
     *
     * @throws IllegalStateException if this is a pooled tensor and it was released
     */
    public TensorSpec spec() {
        return scopeRaw == null ? spec : TensorSpec.builder(scopeRaw.apply(spec.data()), spec.layout()).device(spec.device()).build();
    }

    /** {@return where the elements lie: dtype, shape, strides, byte_offset and flags} */
    public TensorLayout layout() {
        return spec.layout();
    }

    /** {@return the device the memory is on: always a host-accessible one} */
    public DLDevice device() {
        return spec.device();
    }

    /**
     * Exports the tensor, without copying, as a fresh {@code DLManagedTensorVersioned}; read-only
     * memory carries {@link DLTensorFlag#READ_ONLY}.
     *
     * @return the handle; consume it to hand the pointer on
     * @throws IllegalStateException if this tensor was closed
     */
    public ExportedTensor export() {
        return owner.export(spec);
    }

    /**
     * Exports the tensor without copying, as {@code options} say.
     *
     * @param options the struct kind, how {@code byte_offset} is written, read-only
     * @return the handle; consume it to hand the pointer on
     * @throws IllegalArgumentException if a legacy struct is asked for a tensor that is read-only
     *                                  or holds sub-byte values padded to bytes: that struct cannot
     *                                  say so; use {@link #exportCopy}
     * @throws IllegalStateException    if this tensor was closed
     */
    public ExportedTensor export(ExportOptions options) {
        return owner.export(spec, options);
    }

    /**
     * Exports the tensor without copying, as {@code options} say, and hands the pointer on at
     * once, without an {@link ExportedTensor}: for the hot path where the pointer goes straight to
     * a consumer that takes ownership (a native call, a Python capsule). See
     * {@link ExportOwner#exportPointer}: whoever receives the pointer must call its deleter
     * exactly once.
     *
     * @param options the struct kind, how {@code byte_offset} is written, read-only
     * @return the {@code DLManagedTensorVersioned*} or {@code DLManagedTensor*}
     * @throws IllegalArgumentException as {@link #export(ExportOptions)}
     * @throws IllegalStateException    if this tensor was closed
     */
    public MemorySegment exportPointer(ExportOptions options) {
        return owner.exportPointer(spec, options);
    }

    /**
     * Exports a compact copy with {@link DLTensorFlag#IS_COPIED} set (versioned structs only: the
     * legacy one has no flags), so the consumer is its only user; writable unless {@code options}
     * say read-only. This is how read-only memory reaches a consumer that only speaks the legacy
     * struct. Sub-byte values padded to whole bytes are copied padded into a versioned struct,
     * which says so, and packed into a legacy one, which cannot.
     *
     * @param options the struct kind, how {@code byte_offset} is written, read-only
     * @return the handle
     * @throws IllegalStateException if this tensor was closed
     */
    public ExportedTensor exportCopy(ExportOptions options) {
        if (owner.isClosed()) {
            // The memory may still be alive for an earlier export, but this tensor is no longer the user's to share.
            throw new IllegalStateException(this + " was closed; it exports nothing more, not even a copy");
        }
        TensorLayout layout = spec.layout();
        long padded = options.kind() == ManagedTensorKind.VERSIONED ? layout.flags() & DLTensorFlag.IS_SUBBYTE_TYPE_PADDED.mask() : 0;
        OwnedHostTensor copy = allocate(TensorLayout.of(layout.dtype(), layout.shape(), null, 0,
                DLTensorFlag.IS_COPIED.mask() | padded));
        try {
            host.copyTo(copy.host);
            return copy.owner.export(copy.spec, options);
        } finally {
            copy.close(); // the export now holds the only reference
        }
    }

    /**
     * Takes a reference on this tensor's memory for Java code, without exporting it: the memory
     * stays (and a {@link HostTensorPool} block stays taken) until the returned handle is closed,
     * whether or not this tensor was closed first. For code that hands the memory to something
     * reading it raw for a while (a library's run, a slice of rows) where no DLPack consumer takes
     * a struct: a retain costs one small object and an atomic add on the count, and counts in
     * {@link #references()}, never in {@link org.jdlpack.abi.DLPackStats#liveExports()}.
     * {@snippet :
     * ExportOwner.Retained held = tensor.retain();             // the memory stays until held closes
     * tensor.close();                                          // the user is done; the reader is not
     * reader.read(tensor.layout(), address, held::close);      // closes held when it is done, on any thread
     * }
     * <p>The handle's {@link ExportOwner.Retained#close() close()} gives the reference back, from
     * any thread, once: a second close throws {@link IllegalStateException} rather than drop a
     * reference that is not its own. A forgotten handle keeps the memory while it is reachable;
     * once neither it nor this tensor is, the safety net releases the memory and reports the leak
     * under this tensor's name, as for a tensor never closed. A retain holds the reference count,
     * which holds the memory only where this tensor owns it: the caller's arena under a
     * {@link #wrap wrapped} tensor can still be closed.
     *
     * @return the handle holding the reference; close it once
     * @throws IllegalStateException if this tensor was closed (its message names the tensor)
     */
    public ExportOwner.Retained retain() {
        return owner.retain();
    }

    /**
     * {@return whether the memory is this tensor's alone: freed only by its last reference
     * ({@link #allocate}, the copies, {@link HostTensorPool}, and their {@link #rows}), so that a
     * reference (an export, a {@link #retain()}) keeps it} False for a {@link #wrap wrapped}
     * tensor and its rows: their memory is the caller's, whose arena may close whatever this
     * tensor's references say. A consumer that reads the memory through raw addresses, outside the
     * FFM runtime's checks, reads in place only memory a tensor owns (dlpack-onnxruntime copies or
     * refuses the rest).
     */
    public boolean ownsMemory() {
        return !wrapped;
    }

    /** {@return whether {@link #close()} was called: the tensor exports nothing more, while earlier exports stay valid} */
    public boolean isClosed() {
        return owner.isClosed();
    }

    /** {@return the reference count: 1 for this object until closed, plus one per live export and per open {@link #retain()}; 0 once the memory is released} */
    public long references() {
        return owner.references();
    }

    /**
     * Drops the Java side's reference. The memory is freed now if no export is live, else when
     * the last consumer calls its deleter.
     *
     * @throws IllegalStateException if already closed
     */
    @Override
    public void close() {
        owner.close();
    }

    @Override
    public String toString() {
        return "OwnedHostTensor[" + spec + ", references=" + references() + "]";
    }
}
