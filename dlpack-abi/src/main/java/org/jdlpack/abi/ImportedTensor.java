package org.jdlpack.abi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * A tensor produced by native code and owned by Java: the consumer's side of a DLPack exchange.
 *
 * <p>{@link #of(ManagedTensorKind, MemorySegment)} is the front door: it takes ownership of a
 * {@code DLManagedTensorVersioned*} or {@code DLManagedTensor*}, validates every field and copies
 * the metadata (shape, strides with NULL expanded to compact row-major, dtype, device,
 * {@code byte_offset}, flags) into this object, so the metadata accessors never touch native
 * memory. If validation fails, the producer's deleter runs before the exception is thrown.
 *
 * <h2>Lifetime</h2>
 * The tensor and every segment obtained from it share one {@link MemorySegment.Scope}. When that
 * scope ends the producer's deleter is called, exactly once, and any later access to a segment
 * fails with an exception from the FFM runtime instead of touching freed memory. The
 * {@link ImportLifetime} chosen at import says who ends it:
 * <ul>
 *   <li>{@link ImportLifetime#CONFINED} (the default): {@link #close()} on the importing thread.
 *       Closing from another thread throws {@link WrongThreadException} and leaves the tensor
 *       open; so does reading its segments from another thread.</li>
 *   <li>{@link ImportLifetime#SHARED}: {@link #close()} on any thread, at the price of a JVM-wide
 *       handshake per close.</li>
 *   <li>{@link ImportLifetime#in(Arena)}: closing the caller's arena; {@link #close()} then does
 *       nothing, so try-with-resources stays safe.</li>
 *   <li>{@link #apply(ManagedTensorKind, MemorySegment, Function)}: the end of the action, even
 *       when it throws.</li>
 * </ul>
 * A confined or shared tensor that becomes unreachable unclosed, with every segment obtained from
 * it, is released by a safety net after garbage collection and reported as a leak in
 * {@link DLPackStats#leaksReported()}.
 *
 * {@snippet :
 * // The default: this thread reads it and closes it; the close calls the producer's deleter.
 * try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, pointer)) {
 *     float first = HostTensorView.of(tensor).getFloat(0);        // dlpack-cpu: typed, bounds-checked
 * }
 *
 * // SHARED: any thread may read and close it (each close is a JVM-wide handshake).
 * ImportedTensor shared = ImportedTensor.of(ManagedTensorKind.VERSIONED, pointer, ImportLifetime.SHARED);
 * executor.submit(() -> { try (shared) { consume(shared); } });
 *
 * // A caller's arena: closing the arena calls the deleters of everything imported into it.
 * try (Arena batch = Arena.ofShared()) {
 *     for (MemorySegment p : pointers) {
 *         consume(ImportedTensor.of(ManagedTensorKind.VERSIONED, p, ImportLifetime.in(batch)));
 *     }
 * }                                                                 // one handshake for the whole batch
 *
 * // Scoped: released when the action returns or throws; the fastest import.
 * double sum = ImportedTensor.apply(ManagedTensorKind.VERSIONED, pointer, t -> sumOf(HostTensorView.of(t)));
 * }
 *
 * <h2>One owner</h2>
 * A pointer Java already owns (an open {@code ImportedTensor} or {@link ExportedTensor}
 * holds it) is refused with an {@link IllegalStateException} naming the address, and nothing is
 * called: two owners would call the deleter twice. {@link #moveTo(ImportLifetime)} hands the
 * pointer to a new owner and kills this one; APIs that take ownership of an
 * {@code ImportedTensor} (such as {@code ArrowImport.importTensor}) move it the same way.
 *
 * <p>Thread safety: the metadata accessors are safe from any thread. For a shared tensor,
 * concurrent {@link #close()} calls are decided atomically: one wins and the others throw. As with
 * any shared arena, closing fails while another thread is inside a native call that holds one of
 * its segments, and the tensor then stays open; a thread reading a segment while another thread
 * closes the tensor gets an {@link IllegalStateException}.
 *
 * @since 0.1
 */
public final class ImportedTensor implements AutoCloseable {

    /** Who owns the pointer: the safety net's cell, or a plain state for a tensor that cannot be forgotten ({@link Importer}). */
    private final Ownership cell;
    private final ImportedFields fields;
    private final Arena arena;
    /** Whether {@link #arena} is the caller's: then the arena, not {@link #close()}, ends the tensor. */
    private final boolean callersArena;
    private TensorLayout layout;

    ImportedTensor(Ownership cell, ImportedFields fields, Arena arena, boolean callersArena) {
        this.cell = cell;
        this.fields = fields;
        this.arena = arena;
        this.callersArena = callersArena;
    }

    /**
     * Imports a managed tensor with the default lifetime, {@link ImportLifetime#CONFINED}: this
     * thread reads it and closes it, and closing costs no JVM-wide handshake.
     *
     * @param kind    which struct {@code pointer} points to
     * @param pointer the struct's address; ownership moves to the returned tensor
     * @return the tensor; close it when done, on this thread
     * @throws InvalidTensorException      if a field is malformed (the deleter has run)
     * @throws UnsupportedVersionException if the major version is not 1 (the deleter has run)
     * @throws IllegalArgumentException    if the pointer is NULL (nothing was taken)
     * @throws IllegalStateException       if Java already owns the pointer (nothing was taken or called)
     */
    public static ImportedTensor of(ManagedTensorKind kind, MemorySegment pointer) {
        return of(kind, pointer, ImportLifetime.CONFINED);
    }

    /**
     * Imports a managed tensor with the given lifetime.
     *
     * @param kind     which struct {@code pointer} points to
     * @param pointer  the struct's address; ownership moves to the returned tensor
     * @param lifetime who ends the tensor's life, and on which threads it may be used
     * @return the tensor
     * @throws InvalidTensorException      if a field is malformed (the deleter has run)
     * @throws UnsupportedVersionException if the major version is not 1 (the deleter has run)
     * @throws IllegalStateException       if the caller's arena is closed (the deleter has run), or Java
     *                                     already owns the pointer (nothing was taken or called)
     * @throws WrongThreadException        if the caller's arena is confined to another thread
     *                                     (the deleter has run)
     * @throws IllegalArgumentException    if the pointer is NULL (nothing was taken)
     */
    public static ImportedTensor of(ManagedTensorKind kind, MemorySegment pointer, ImportLifetime lifetime) {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(lifetime, "lifetime");
        return Importer.take(kind, Importer.checkedAddress(pointer), lifetime);
    }

    /**
     * Imports a managed tensor, runs {@code action} on it and releases it when the action returns
     * or throws: the fastest import, because a tensor that cannot be forgotten needs no safety
     * net. The tensor and its segments are confined to this thread and must not be used after the
     * action; the action may close the tensor itself, or move it ({@link #moveTo}), and then
     * nothing is released here.
     *
     * @param kind    which struct {@code pointer} points to
     * @param pointer the struct's address; ownership moves here
     * @param action  what to do with the tensor
     * @param <R>     the action's result type
     * @return what the action returned
     * @throws InvalidTensorException      if a field is malformed (the deleter has run)
     * @throws UnsupportedVersionException if the major version is not 1 (the deleter has run)
     * @throws IllegalArgumentException    if the pointer is NULL (nothing was taken)
     * @throws IllegalStateException       if Java already owns the pointer (nothing was taken or called)
     */
    public static <R> R apply(ManagedTensorKind kind, MemorySegment pointer, Function<? super ImportedTensor, ? extends R> action) {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(action, "action");
        return Importer.applyScoped(kind, Importer.checkedAddress(pointer), action);
    }

    /**
     * Calls the deleter of a managed tensor you were handed and will not import, now: for a
     * producer's result you do not want, or a capsule nobody consumed. Nothing but the
     * {@code deleter} field is read (a NULL deleter is not called), no object is kept, and the
     * deleter runs on this thread.
     *
     * @param kind    which struct {@code pointer} points to
     * @param pointer the struct's address; ownership moves here and ends at once
     * @throws IllegalArgumentException if the pointer is NULL (nothing was called)
     * @throws IllegalStateException    if Java owns the pointer (an open {@code ImportedTensor}, or
     *                                  an {@link ExportedTensor} not yet handed on): close that
     *                                  instead; nothing was called
     */
    public static void discard(ManagedTensorKind kind, MemorySegment pointer) {
        Objects.requireNonNull(kind, "kind");
        long address = Importer.checkedAddress(pointer);
        OwnedPointers.drop(address, OwnedPointers.claim(kind, address)); // refuses a pointer Java owns
        ForeignDeleters.call(kind, address);
    }

    /** {@return which struct was imported} */
    public ManagedTensorKind kind() {
        return cell.kind();
    }

    /** {@return the address of the imported {@code DLManagedTensor(Versioned)*}, for diagnostics} */
    public long managedTensorAddress() {
        return cell.address();
    }

    /** {@return the DLPack version the producer stamped; empty for a legacy struct, which has none} */
    public Optional<DLPackVersion> version() {
        checkNotMoved();
        return cell.kind() == ManagedTensorKind.LEGACY ? Optional.empty() : Optional.of(fields.dlpackVersion());
    }

    /** {@return where the data lives} */
    public DLDevice device() {
        checkNotMoved();
        return fields.device();
    }

    /**
     * {@return the element type, shape, strides (compact row-major when the producer gave NULL),
     * {@code byte_offset}, flags (always 0 for a legacy struct) and extent}
     */
    public TensorLayout layout() {
        checkNotMoved();
        TensorLayout known = layout;
        if (known == null) {
            // Made on first use, not at import, so an import that never asks costs nothing more;
            // a racing second make stores an equal immutable value.
            known = fields.layout();
            layout = known;
        }
        return known;
    }

    /** {@return whether the producer wrote NULL strides (legal before DLPack 1.2), so the strides were computed here} */
    public boolean stridesWereNull() {
        checkNotMoved();
        return fields.stridesWereNull;
    }

    /**
     * {@return the {@code data} field: a host or device address, or a {@code cl_mem} on OpenCL; may
     * be 0 for a tensor with no elements}
     */
    public long dataAddress() {
        checkNotMoved();
        return fields.data;
    }

    /** {@return the lifetime shared by this tensor and its segments} */
    public MemorySegment.Scope scope() {
        checkNotMoved();
        return arena.scope();
    }

    /**
     * {@return whether {@link #close()} ends this tensor's life; {@code false} for a tensor imported
     * into a caller's arena ({@link ImportLifetime#in(Arena)}), which lives exactly as long as that
     * arena}
     */
    public boolean endsOnClose() {
        return !callersArena;
    }

    /** {@return whether the tensor is still alive: its deleter has not been called} */
    public boolean isAlive() {
        return arena.scope().isAlive();
    }

    /**
     * The bytes the elements reach, as a segment bounded to exactly the layout's
     * {@link TensorLayout#extent() extent} and bound to this tensor's lifetime. Element 0 is at
     * offset {@code -layout().extent().startByte()} of the segment;
     * with only non-negative strides that is offset 0. The segment is read-only when
     * {@link TensorLayout#isReadOnly()}.
     *
     * @return the data segment; empty (size 0) for a tensor with no elements
     * @throws UnsupportedDeviceException if the CPU cannot address the device's memory
     * @throws IllegalStateException      if the tensor was closed
     */
    public MemorySegment hostSegment() {
        checkNotMoved();
        if (!DLDeviceType.isHostAccessible(fields.deviceType)) {
            throw notOnHost();
        }
        if (!isAlive()) {
            throw closed();
        }
        long size = fields.extentSize;
        long start = size == 0 ? fields.data : fields.data + fields.byteOffset + fields.extentStart;
        MemorySegment segment = NativeMemory.at(start, size, arena, null);
        return DLTensorFlag.READ_ONLY.isSet(fields.flags) ? segment.asReadOnly() : segment;
    }

    // Messages built out of line: hostSegment stays small enough to inline into every caller.
    private UnsupportedDeviceException notOnHost() {
        return new UnsupportedDeviceException(fields.device(), "a tensor on " + fields.device()
                + " has no host-accessible memory; use the device module to copy it");
    }

    private IllegalStateException closed() {
        return new IllegalStateException(describe() + " was closed: its deleter has run and its memory may be gone");
    }

    /**
     * Ends the tensor's life and calls the producer's deleter: every segment obtained from the
     * tensor becomes inaccessible. For a tensor in a caller's arena ({@link ImportLifetime#in})
     * this does nothing: closing that arena releases it.
     *
     * @throws WrongThreadException  if the tensor is {@link ImportLifetime#CONFINED} and this is
     *                               not the importing thread (the tensor stays open)
     * @throws IllegalStateException if already closed; or, for a {@link ImportLifetime#SHARED}
     *                               tensor, if another thread is inside a native call holding one
     *                               of its segments (the tensor stays open)
     */
    @Override
    public void close() {
        if (callersArena || cell.state() == Ownership.MOVED) {
            return;
        }
        try {
            arena.close();
        } catch (WrongThreadException e) {
            throw new WrongThreadException("this ImportedTensor is confined to the thread that imported it; close it on that"
                    + " thread, or import it with ImportLifetime.SHARED to close it from any thread");
        } catch (IllegalStateException e) {
            if (!arena.scope().isAlive()) {
                if (endState() == Ownership.MOVED) {
                    return; // a moveTo on another thread won: after a move, close does nothing
                }
                throw new IllegalStateException(describe() + " was already closed; its deleter has run once");
            }
            throw e;
        }
        // The scope is closed, so no segment can reach the memory any more: now the producer may free it.
        // The fence keeps the scope the safety net watches reachable until the release has won, so
        // the net cannot take the pointer between the arena's close and this call.
        try {
            cell.callDeleter();
        } finally {
            Reference.reachabilityFence(arena);
        }
    }

    /**
     * Moves ownership of the managed tensor into a new tensor with the given lifetime, and kills
     * this one: the way to hand an import to another thread ({@link ImportLifetime#SHARED}), into an
     * arena ({@link ImportLifetime#in}), or to an owner that takes it (Arrow, ONNX Runtime).
     * Nothing is copied and no deleter runs.
     *
     * <p>This tensor's life ends first, exactly as {@link #close()} would end it but without the
     * deleter: every segment obtained from it becomes inaccessible, so nothing obtained before the
     * move can reach memory the new owner frees. Afterwards {@link #close()} does nothing, so
     * try-with-resources and {@link #apply} stay safe, and every other accessor but
     * {@link #kind()}, {@link #managedTensorAddress()}, {@link #isAlive()} and
     * {@link #endsOnClose()} throws {@link IllegalStateException} saying that the tensor was moved.
     *
     * <p>Moving follows {@link #close()}'s thread rules: a {@link ImportLifetime#CONFINED} tensor
     * moves only on its importing thread. A tensor in a caller's arena cannot move: that arena
     * would still end the memory's life when it closes.
     *
     * {@snippet :
     * ImportedTensor mine = ImportedTensor.of(ManagedTensorKind.VERSIONED, pointer);  // confined to this thread
     * ImportedTensor theirs = mine.moveTo(ImportLifetime.SHARED);                      // any thread may close it
     * executor.submit(() -> { try (theirs) { consume(theirs); } });
     * mine.close();                                                                    // does nothing now
     * }
     *
     * @param lifetime the new tensor's lifetime
     * @return the new owner of the managed tensor
     * @throws IllegalStateException if this tensor was closed or moved, lives in a caller's arena,
     *                               or (for a shared tensor) another thread is inside a native
     *                               call with one of its segments; nothing moved. Also if the new
     *                               lifetime's arena is closed: then the deleter has run
     * @throws WrongThreadException  if this tensor is confined to another thread (nothing moved), or
     *                               the new lifetime's arena is (the deleter has run)
     */
    public ImportedTensor moveTo(ImportLifetime lifetime) {
        Objects.requireNonNull(lifetime, "lifetime");
        checkNotMoved();
        if (callersArena) {
            throw new IllegalStateException("cannot move " + describe() + ": it lives as long as a caller's arena, which would end "
                    + "the memory's life when it closes, whoever owns the tensor then; import it with ImportLifetime.CONFINED or "
                    + "SHARED to move it. Nothing moved");
        }
        try {
            arena.close(); // no segment of this tensor can reach the memory once the new owner may free it
        } catch (WrongThreadException e) {
            throw new WrongThreadException("cannot move " + describe() + " from this thread: it is confined to the thread that "
                    + "imported it; move it there (or import it with ImportLifetime.SHARED). Nothing moved");
        } catch (IllegalStateException e) {
            if (!arena.scope().isAlive()) {
                if (endState() == Ownership.MOVED) {
                    throw new IllegalStateException("cannot move " + describe() + ": it was already moved to another owner (by a "
                            + "moveTo on another thread); use the object it was moved to");
                }
                throw new IllegalStateException("cannot move " + describe() + ": it was closed and its deleter has run");
            }
            throw new IllegalStateException("cannot move " + describe() + " while another thread is inside a native call with one "
                    + "of its segments. Nothing moved", e);
        }
        int ticket;
        try {
            ticket = cell.handOver();
        } finally {
            Reference.reachabilityFence(arena); // as in close(): the safety net must not take the pointer meanwhile
        }
        if (ticket == Integer.MIN_VALUE) {
            throw new IllegalStateException("cannot move " + describe() + ": it no longer owns its managed tensor");
        }
        return Importer.owning(cell.kind(), cell.address(), ticket, fields, lifetime);
    }

    /**
     * For the loser of a race to end this tensor's arena: {@return how the winner ended it, MOVED
     * or DELETED} The winner ends the arena first and sets the cell's state right after, so the
     * loser waits those few instructions (longer only if the winner's thread was descheduled).
     */
    private int endState() {
        long deadline = System.nanoTime() + 10_000_000_000L;
        for (int spins = 0; ; spins++) {
            int state = cell.state();
            if (state != Ownership.OWNED || System.nanoTime() - deadline > 0) {
                return state;
            }
            if (spins < 100) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    private void checkNotMoved() {
        if (cell.state() == Ownership.MOVED) {
            throw new IllegalStateException(describe() + " was moved to another owner (moveTo, or an API that takes ownership such "
                    + "as ArrowImport.importTensor); use the object it was moved to");
        }
    }

    /** What messages call this tensor: its struct and address, without touching native memory. */
    private String describe() {
        return "the ImportedTensor of the " + cell.kind().structName() + " at 0x" + Long.toHexString(cell.address());
    }

    @Override
    public String toString() {
        if (cell.state() == Ownership.MOVED) {
            return "ImportedTensor[" + cell.kind().structName() + " at 0x" + Long.toHexString(cell.address()) + ", moved]";
        }
        return "ImportedTensor[" + cell.kind().structName() + version().map(v -> " " + v).orElse("") + ", " + fields.device() + ", "
                + layout() + (isAlive() ? "" : ", closed") + "]";
    }
}
