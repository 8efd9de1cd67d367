package org.jdlpack.abi;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;
import java.util.Objects;

import org.jdlpack.abi.plumbing.Diagnostics;
import org.jdlpack.abi.plumbing.Ledger;
import org.jdlpack.abi.plumbing.OwnerName;

/**
 * The Java owner of memory that is exported to native code: a reference count over one resource
 * (an {@link java.lang.foreign.Arena}, a tensor, a device buffer) and the action that frees it.
 *
 * <p>The Java side holds one reference from creation until {@link #close()}; every export holds
 * one more until a consumer calls its deleter. The release action runs exactly once, when the last
 * reference goes, on whichever thread drops it: the thread that closes the owner, or a native
 * thread inside a deleter. So closing the owner early is safe: memory a consumer still uses stays
 * valid until that consumer is done. A closed owner exports nothing more: every export after
 * {@link #close()} throws {@link IllegalStateException}. The release action must therefore be callable from any thread
 * (close a shared arena, not a confined one), and exports of memory confined to one thread are
 * refused. If the release action throws, the exception is counted in
 * {@link DLPackStats#releaseCallbackFailures()} and logged, never propagated into native code.
 *
 * <p>Do not free the exported memory any other way while the owner lives: a native consumer may be
 * reading it.
 *
 * <p>An owner that becomes unreachable before its release action ran (never closed, and no export
 * live: a live export keeps its owner reachable) is released by the safety net after garbage
 * collection: the release action runs on the safety net's thread, the leak is counted in
 * {@link DLPackStats#leaksReported()} and logged, with the owner's creation site when leak tracking
 * is on. Until its release action runs, an owner counts in {@link DLPackStats#liveExportOwners()}.
 * A release action that keeps the owner itself reachable (a lambda that captures it) defeats the
 * safety net; the resource and the release action must not refer back to the owner.
 *
 * {@snippet :
 * Arena arena = Arena.ofShared();                                   // shared: the last release may run on any thread
 * MemorySegment data = arena.allocate(ValueLayout.JAVA_FLOAT, 6);
 * ExportOwner owner = ExportOwner.of(arena, arena::close);           // frees when Java and every consumer are done
 * TensorSpec spec = TensorSpec.of(data, DLDataType.FLOAT32, 2, 3);
 * nativeLibrary.consume(owner.export(spec).consume());               // the library calls the deleter, on any thread
 * owner.close();                                                     // Java's reference; the memory stays for the consumer
 * }
 *
 * <p>Thread safety: every method may be called from any thread, concurrently.
 *
 * @since 0.1
 */
public final class ExportOwner extends ExportHolder implements AutoCloseable {

    private static final VarHandle REFERENCES;
    private static final VarHandle JAVA_REFERENCE_DROPPED;

    static {
        try {
            var lookup = MethodHandles.lookup();
            REFERENCES = lookup.findVarHandle(ExportOwner.class, "references", long.class);
            JAVA_REFERENCE_DROPPED = lookup.findVarHandle(ExportOwner.class, "javaReferenceDropped", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * A thread that never runs: memory of a confined arena is accessible by its owner thread only,
     * never by this one, while shared, global and automatic memory is accessible by every thread.
     */
    private static final Thread NOT_AN_OWNER = notAnOwner();

    private static Thread notAnOwner() {
        // Holds no context class loader: in an engine the first exporting task's (a job's) would
        // otherwise stay reachable from this field.
        Thread thread = Thread.ofPlatform().inheritInheritableThreadLocals(false).unstarted(() -> { });
        thread.setContextClassLoader(null);
        return thread;
    }

    /** The release action and the resource: the safety net's entry, which must not reach this owner. */
    private final Release entry;
    // The reference count is the one field every export and every deleter call writes. Padded on
    // both sides so that it has a cache line to itself: owners allocated, or moved by the GC, next
    // to each other would otherwise share one, and threads exporting from owners of their own would
    // slow each other down (the JMH thread series, benchmarks/notes.md). The padding looks unused:
    // ExportOwnerLayoutTest is what keeps it.
    @SuppressWarnings("unused") // padding only
    private long p0, p1, p2, p3, p4, p5, p6;
    @SuppressWarnings("unused") // accessed through REFERENCES
    private volatile long references = 1;
    @SuppressWarnings("unused") // padding only
    private long q0, q1, q2, q3, q4, q5, q6;
    @SuppressWarnings("unused") // accessed through JAVA_REFERENCE_DROPPED
    private volatile boolean javaReferenceDropped;

    private ExportOwner(Object resource, Runnable release) {
        this.entry = new Release(this, resource, Objects.requireNonNull(release, "release"));
    }

    /**
     * The release action, run exactly once ({@link Ledger.RunOnce}): by the last reference's drop,
     * or by the safety net when the owner was forgotten.
     */
    private static final class Release extends Ledger.RunOnce {

        private final Object resource;
        private final Runnable action;
        /** Whether the owner's own reference was dropped: then only a forgotten retain can have kept the memory. */
        volatile boolean ownerClosed;

        Release(ExportOwner owner, Object resource, Runnable action) {
            super(owner);
            this.resource = resource;
            this.action = action;
            Counters.exportOwnerOpened();
            open();
        }

        /** Runs the action; never throws (the last reference may drop inside a deleter upcall). */
        @Override
        protected void release() {
            Counters.exportOwnerReleased();
            try {
                action.run();
            } catch (Throwable t) {
                Counters.RELEASE_CALLBACK_FAILURES.increment();
                Diagnostics.report(Level.ERROR, "the release action of " + name() + " threw; the memory it guards may have leaked", t);
            }
        }

        @Override
        protected String describe() {
            // Forgotten after its close, an owner had only retains left (a live export keeps it reachable).
            return ownerClosed ? "a retain of " + name() : name();
        }

        /** {@return what messages call the owner: the object the user holds} */
        String name() {
            return resource instanceof OwnerName named ? named.ownerName() : "ExportOwner" + (resource != null ? "(" + resource + ")" : "");
        }
    }

    /**
     * Creates an owner that runs {@code release} when the Java side and every export are done.
     *
     * @param release frees the exported memory; called once, from any thread
     * @return the owner, holding the Java side's reference
     */
    public static ExportOwner of(Runnable release) {
        return new ExportOwner(null, release);
    }

    /**
     * Creates an owner that also keeps {@code resource} strongly reachable until it is released,
     * for memory whose lifetime is tied to a Java object (an automatic arena, a buffer).
     *
     * @param resource an object to keep reachable; may be null
     * @param release  frees the exported memory; called once, from any thread
     * @return the owner, holding the Java side's reference
     */
    public static ExportOwner of(Object resource, Runnable release) {
        return new ExportOwner(resource, release);
    }

    /**
     * Exports the tensor as a fresh {@code DLManagedTensorVersioned}, stamped with
     * {@link DLPackVersion#CURRENT} and the spec's flags, with {@code byte_offset} folded into
     * {@code data} where the device allows; the same as {@code export(spec, ExportOptions.VERSIONED)}.
     *
     * @param spec the tensor
     * @return a handle owning the new struct; hand it to a consumer with
     *         {@link ExportedTensor#consume()}, or close it
     * @throws IllegalArgumentException if the data lives in a confined arena
     * @throws IllegalStateException    if this owner was closed
     */
    public ExportedTensor export(TensorSpec spec) {
        return export(spec, ExportOptions.VERSIONED);
    }

    /**
     * Exports the tensor as a fresh struct, written as {@code options} say. This is the front door
     * of every export. Every call builds a new struct, shape and strides in one native allocation,
     * because each consumer may keep and free its own.
     *
     * @param spec    the tensor
     * @param options the struct kind, how {@code byte_offset} is written, read-only
     * @return a handle owning the new struct
     * @throws IllegalArgumentException if a read-only spec, or one of sub-byte values padded to bytes, is
     *                                  exported as legacy; or the data lives
     *                                  in a confined arena (the consumer's deleter may run on any
     *                                  thread; use a shared or global arena, or an automatic one
     *                                  that the owner keeps reachable, {@link #of(Object, Runnable)})
     * @throws IllegalStateException    if this owner was closed (exports made before stay valid)
     */
    public ExportedTensor export(TensorSpec spec, ExportOptions options) {
        return new ExportedTensor(options.kind(), exportAddress(spec, options));
    }

    /**
     * Exports the tensor like {@link #export(TensorSpec, ExportOptions)} and hands the pointer on
     * at once, without a {@link ExportedTensor}: for the hot path where the pointer goes
     * straight into a native call that takes ownership. Whoever receives the pointer must call its
     * deleter exactly once; if the pointer is lost instead, the export stays live (counted in
     * {@link DLPackStats#liveExports()}, listed by leak tracking) and keeps this owner's memory.
     *
     * @param spec    the tensor
     * @param options the struct kind, how {@code byte_offset} is written, read-only
     * @return the {@code DLManagedTensorVersioned*} or {@code DLManagedTensor*}, as a zero-length segment
     * @throws IllegalArgumentException as {@link #export(TensorSpec, ExportOptions)}
     * @throws IllegalStateException    if this owner was closed
     */
    public MemorySegment exportPointer(TensorSpec spec, ExportOptions options) {
        return MemorySegment.ofAddress(exportAddress(spec, options));
    }

    private long exportAddress(TensorSpec spec, ExportOptions options) {
        ManagedTensorKind kind = options.kind();
        if (kind == ManagedTensorKind.LEGACY && spec.layout().isReadOnly()) {
            throw new IllegalArgumentException("a read-only tensor cannot be exported as a legacy DLManagedTensor, "
                    + "which has no way to say read-only; export it versioned, or export a copy");
        }
        if (kind == ManagedTensorKind.LEGACY && spec.layout().isSubbytePadded() && spec.layout().dtype().isSubByte()) {
            throw new IllegalArgumentException("a tensor of " + spec.layout().dtype() + " values padded to whole bytes cannot be "
                    + "exported as a legacy DLManagedTensor, whose consumers read sub-byte values packed; export it versioned "
                    + "(IS_SUBBYTE_TYPE_PADDED), or export a packed copy");
        }
        refuseIfClosed(); // first: after a close the memory may be gone, and the close is what the caller must hear of
        MemorySegment data = spec.data();
        if (!data.scope().isAlive()) {
            throw new IllegalStateException("the data segment of " + spec + " is no longer alive");
        }
        if (!data.isAccessibleBy(NOT_AN_OWNER)) {
            throw new IllegalArgumentException("the data segment of " + spec + " belongs to a confined arena, but a consumer "
                    + "may call the deleter, and so free the memory, on any thread; allocate it in a shared or global arena "
                    + "(Arena.ofShared(), Arena.global()), or an automatic one kept reachable by ExportOwner.of(arena, release)");
        }
        long headerBytes = ManagedTensorWriter.headerBytes(kind, spec.layout().ndim());
        long id = ExportRegistry.reserve(headerBytes);
        long address = 0;
        boolean retained = false;
        try {
            address = ExportRegistry.headerAddress(id);
            ManagedTensorWriter.write(kind, spec, options, id, address);
            ExportRegistry.prepare(id, this, kind, headerBytes);
            // The reference last, right before the slot goes live: whatever throws before it, a
            // StackOverflowError on a nearly full stack above all, has no reference to give back.
            retain0();
            retained = true; // a local store: nothing between the reference and the store that publishes
            ExportRegistry.publish(id);
            // Counted live first, then the stubs checked: a DLPackRuntime.release() on another thread
            // either sees this export, or has switched the deleter off and this switches it on again.
            ExportDeleterUpcalls.ensureOn();
        } catch (Throwable t) {
            // The address never left: no consumer will call this export's deleter, so the export is
            // withdrawn here, reserved or live, and its reference given back, unless a deleter call
            // (a bogus one, with this address) removed it and gave the reference back first.
            if (ExportRegistry.withdraw(id) && retained) {
                dropReference();
            }
            throw t;
        }
        return address;
    }

    /**
     * Takes one more reference on the memory, held by Java code rather than by an export: the
     * memory stays until the returned handle is closed, even after {@link #close()}. For Java code
     * that must keep the memory while something reads it raw (rows of a tensor that are a tensor
     * of their own, a library run over it) without a DLPack struct that no consumer will ever
     * take: a retain is one small object and an atomic add, and it counts in
     * {@link #references()}, never in {@link DLPackStats#liveExports()} (which counts what native
     * code holds).
     *
     * {@snippet :
     * try (ExportOwner.Retained held = owner.retain()) {    // the memory stays until this closes
     *     owner.close();                                    // Java's own reference: the memory stays for the retain
     *     readRaw(data);
     * }                                                     // the last reference: the release action runs here
     * }
     *
     * <p>A forgotten retain keeps the memory only while its handle is reachable: the handle keeps
     * this owner reachable, and once neither is, the safety net releases the owner and reports
     * the leak under the owner's name, as for an owner never closed.
     *
     * @return the handle that gives the reference back; close it once
     * @throws IllegalStateException if this owner was closed (a retain, like an export, must not
     *                               keep a closed owner's memory alive for ever), naming the owner
     */
    public Retained retain() {
        retain0();
        return new Retained(this);
    }

    /**
     * One reference on an {@link ExportOwner}'s memory, taken by {@link #retain()} and given back
     * by {@link #close()}: an acquire and its release, as one object, so that try-with-resources
     * can hold it.
     *
     * <p>Thread safety: {@link #close()} may be called from any thread; of two closes, exactly one
     * drops the reference and the other throws.
     */
    public static final class Retained implements AutoCloseable {
        private static final VarHandle CLOSED;

        static {
            try {
                CLOSED = MethodHandles.lookup().findVarHandle(Retained.class, "closed", boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final ExportOwner owner;
        @SuppressWarnings("unused") // accessed through CLOSED
        private volatile boolean closed;

        private Retained(ExportOwner owner) {
            this.owner = owner;
        }

        /**
         * Gives the reference back; the owner's release action runs now if it was the last. Not
         * idempotent, on purpose: a second close would drop a reference that is someone else's,
         * so it is refused instead.
         *
         * @throws IllegalStateException if this handle was closed already, naming the owner
         */
        @Override
        public void close() {
            if (!CLOSED.compareAndSet(this, false, true)) {
                throw new IllegalStateException("a retain of " + owner.entry.name() + " was already closed; close each retain "
                        + "once (a second close would drop a reference that is not its own)");
            }
            owner.dropReference();
        }

        /** {@return whether {@link #close()} was called} */
        public boolean isClosed() {
            return closed;
        }

        @Override
        public String toString() {
            return "ExportOwner.Retained[" + owner.entry.name() + (closed ? ", closed" : "") + "]";
        }
    }

    /**
     * Drops the Java side's reference. The release action runs now if no export is live, or
     * later when the last consumer calls its deleter.
     *
     * @throws IllegalStateException if the Java side's reference was already dropped
     */
    @Override
    public void close() {
        if (!JAVA_REFERENCE_DROPPED.compareAndSet(this, false, true)) {
            throw new IllegalStateException(entry.name() + " was already closed; close it once (its memory is freed when the "
                    + "last export's deleter has run)");
        }
        entry.ownerClosed = true;
        dropReference();
    }

    /**
     * {@return the current reference count: 1 for the Java side until {@link #close()}, plus one
     * per live export; 0 once released} A snapshot, for monitoring and tests.
     */
    public long references() {
        return (long) REFERENCES.getVolatile(this);
    }

    /** {@return whether {@link #close()} was called: the owner then exports nothing more} */
    public boolean isClosed() {
        return (boolean) JAVA_REFERENCE_DROPPED.getVolatile(this);
    }

    /** {@return whether the release action has run (or is running): {@code true} once the last reference is gone} */
    public boolean isReleased() {
        return references() == 0;
    }

    /**
     * A closed owner exports nothing more: live exports keep the memory until their deleters run,
     * but a chain of new exports must not keep a closed tensor's memory alive for ever.
     */
    private void refuseIfClosed() {
        if (isClosed()) {
            throw new IllegalStateException(entry.name() + " was closed; it exports and retains nothing more (exports and "
                    + "retains made before the close stay valid until their deleters run or they are closed)");
        }
    }

    /** Adds one reference; refuses a closed or released owner. */
    private void retain0() {
        refuseIfClosed(); // again: a close may have raced the export since the first check
        long current;
        do {
            current = (long) REFERENCES.getVolatile(this);
            if (current == 0) {
                throw new IllegalStateException(entry.name() + " was already released; its memory may be gone");
            }
        } while (!REFERENCES.compareAndSet(this, current, current + 1));
    }

    /** Drops one reference; runs the release action on the last. Never throws. */
    @Override
    void dropReference() {
        long left = (long) REFERENCES.getAndAdd(this, -1L) - 1;
        if (left == 0) {
            entry.run();
        }
        // Until the action has run: unreachable earlier, this owner would look forgotten to the safety net.
        Reference.reachabilityFence(this);
    }

    @Override
    public String toString() {
        return "ExportOwner[" + entry.name() + ", references=" + references() + "]";
    }
}
