package org.jdlpack.abi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.Objects;

/**
 * An owned, not yet consumed pointer to a {@code DLManagedTensorVersioned} or
 * {@code DLManagedTensor}: the Java counterpart of an unused {@code dltensor} capsule.
 *
 * <p>The handle owns the pointer until exactly one of these happens:
 * <ul>
 *   <li>{@link #consume()} hands the pointer to native code, which becomes responsible for calling
 *       the deleter (the capsule is renamed {@code used_dltensor});</li>
 *   <li>{@link #importTensor()} or {@link #importTensor(ImportLifetime)} moves ownership into an
 *       {@link ImportedTensor};</li>
 *   <li>{@link #close()} calls the deleter.</li>
 * </ul>
 * Ownership leaves the handle once: a second consume or import, or a close after a close, throws
 * {@link IllegalStateException} and never calls the deleter again. Closing a handle whose pointer
 * was consumed or imported does nothing, so try-with-resources is always safe. A handle that
 * becomes unreachable while it still owns its pointer is released by the safety net after garbage
 * collection and reported as a leak.
 *
 * <p>Thread safety: every method may be called from any thread; racing consume, import and close
 * calls are decided by one atomic transition, and exactly one of them wins.
 */
public final class ManagedTensorHandle implements AutoCloseable {

    private final OwnershipCell cell;

    ManagedTensorHandle(ManagedTensorKind kind, long address) {
        // The cell watches this handle: forgotten while it still owns the pointer, it is released by the safety net.
        this.cell = OwnershipCell.claim(kind, address, "ManagedTensorHandle", this, null);
    }

    /**
     * Takes ownership of a {@code DLManagedTensorVersioned*} from a producer.
     *
     * @param pointer the struct's address; its size is ignored
     * @return the handle, owning the pointer
     * @throws IllegalArgumentException if the pointer is NULL
     * @throws IllegalStateException    if Java already owns the pointer (nothing was taken or called)
     */
    public static ManagedTensorHandle ofVersioned(MemorySegment pointer) {
        return of(ManagedTensorKind.VERSIONED, pointer);
    }

    /**
     * Takes ownership of a legacy {@code DLManagedTensor*} from a producer.
     *
     * @param pointer the struct's address; its size is ignored
     * @return the handle, owning the pointer
     * @throws IllegalArgumentException if the pointer is NULL
     * @throws IllegalStateException    if Java already owns the pointer (nothing was taken or called)
     */
    public static ManagedTensorHandle ofLegacy(MemorySegment pointer) {
        return of(ManagedTensorKind.LEGACY, pointer);
    }

    /**
     * Takes ownership of a managed-tensor pointer of the given kind.
     *
     * @param kind    which struct the pointer points to
     * @param pointer the struct's address; its size is ignored
     * @return the handle, owning the pointer
     * @throws IllegalArgumentException if the pointer is NULL or not native
     * @throws IllegalStateException    if Java already owns the pointer (nothing was taken or called)
     */
    public static ManagedTensorHandle of(ManagedTensorKind kind, MemorySegment pointer) {
        Objects.requireNonNull(kind, "kind");
        return new ManagedTensorHandle(kind, checkedAddress(pointer));
    }

    /** The address of a pointer that may be taken ownership of: native and not NULL. */
    static long checkedAddress(MemorySegment pointer) {
        if (!pointer.isNative() || pointer.address() == 0) {
            throw new IllegalArgumentException("a managed tensor pointer must be a non-NULL native address, got " + pointer);
        }
        return pointer.address();
    }

    /** {@return which struct the pointer refers to} */
    public ManagedTensorKind kind() {
        return cell.kind;
    }

    /** {@return the struct's address, whether or not the handle still owns it} */
    public long address() {
        return cell.address;
    }

    /** {@return whether the handle still owns its pointer: not consumed, imported or closed} */
    public boolean isOwned() {
        return cell.state() == OwnershipCell.OWNED;
    }

    /**
     * Hands the pointer on: from now on whoever receives it must call its deleter exactly once.
     *
     * @return the pointer, as a zero-length segment to pass to a downcall
     * @throws IllegalStateException if the handle no longer owns the pointer
     */
    public MemorySegment consume() {
        moveOut("consume");
        return MemorySegment.ofAddress(cell.address);
    }

    /**
     * Moves ownership into an imported tensor with the default lifetime,
     * {@link ImportLifetime#CONFINED}: the same as
     * {@link ImportedTensor#of(ManagedTensorKind, MemorySegment)} for a pointer already held in a
     * handle. The struct is validated first; if it is rejected its deleter is called before the
     * exception is thrown.
     *
     * @return the tensor; close it on this thread
     * @throws IllegalStateException        if the handle no longer owns the pointer
     * @throws InvalidTensorException       if a field is malformed (the deleter has run)
     * @throws UnsupportedVersionException  if the major version is not 1 (the deleter has run)
     */
    public ImportedTensor importTensor() {
        return importTensor(ImportLifetime.CONFINED);
    }

    /**
     * Moves ownership into an imported tensor with the given lifetime: the same as
     * {@link ImportedTensor#of(ManagedTensorKind, MemorySegment, ImportLifetime)} for a pointer
     * already held in a handle.
     *
     * @param lifetime who ends the tensor's life, and on which threads it may be used
     * @return the tensor
     * @throws IllegalStateException        if the handle no longer owns the pointer, or the
     *                                      caller's arena is closed (the deleter has run)
     * @throws WrongThreadException         if the caller's arena is confined to another thread
     *                                      (the deleter has run)
     * @throws InvalidTensorException       if a field is malformed (the deleter has run)
     * @throws UnsupportedVersionException  if the major version is not 1 (the deleter has run)
     */
    public ImportedTensor importTensor(ImportLifetime lifetime) {
        Objects.requireNonNull(lifetime, "lifetime");
        int ticket;
        try {
            ticket = cell.handOver(); // the claim on the address goes with the pointer: no other take can slip in
        } finally {
            Reference.reachabilityFence(this); // see moveOut
        }
        if (ticket == Integer.MIN_VALUE) {
            throw new IllegalStateException("cannot import: " + describeState());
        }
        return ImportedTensor.takeClaimed(cell.kind, cell.address, ticket, lifetime, true);
    }

    private void moveOut(String what) {
        try {
            if (!cell.move()) {
                throw new IllegalStateException("cannot " + what + ": " + describeState());
            }
        } finally {
            // The safety net watches this handle: without the fence the JIT may treat it as dead
            // once the cell is loaded, and a GC at this point would let the net release the pointer
            // that this call is moving.
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Calls the deleter if the handle still owns the pointer; does nothing if the pointer was
     * consumed or imported.
     *
     * @throws IllegalStateException if the handle was already closed
     */
    @Override
    public void close() {
        try {
            if (cell.callDeleter()) {
                return;
            }
            if (cell.state() == OwnershipCell.DELETED) {
                throw new IllegalStateException("ManagedTensorHandle already closed");
            }
        } finally {
            Reference.reachabilityFence(this); // see moveOut
        }
    }

    private String describeState() {
        return switch (cell.state()) {
            case OwnershipCell.MOVED -> "the " + cell.kind.structName() + " at 0x" + Long.toHexString(cell.address)
                    + " was already consumed or imported";
            case OwnershipCell.DELETED -> "the handle was closed and the deleter has run";
            default -> "owned";
        };
    }

    @Override
    public String toString() {
        return "ManagedTensorHandle[" + cell.kind.structName() + " at 0x" + Long.toHexString(cell.address) + ", "
                + (isOwned() ? "owned" : describeState()) + "]";
    }
}
