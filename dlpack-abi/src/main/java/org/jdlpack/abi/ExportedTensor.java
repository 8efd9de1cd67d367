package org.jdlpack.abi;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.Objects;

/**
 * A fresh export of Java memory that has not been handed on yet: the struct an
 * {@link ExportOwner} built, owned by this object until exactly one of these happens:
 * <ul>
 *   <li>{@link #consume()} hands the pointer to native code, which must call its deleter exactly
 *       once (in Python's terms, the capsule is renamed {@code used_dltensor});</li>
 *   <li>{@link #importTensor()} or {@link #importTensor(ImportLifetime)} takes it into an
 *       {@link ImportedTensor} in this JVM, as {@link ImportedTensor#of} would;</li>
 *   <li>{@link #close()} calls its deleter: the export is withdrawn, and its reference on the
 *       owner's memory dropped.</li>
 * </ul>
 * The pointer leaves once: a second consume or import, or a close after a close, throws
 * {@link IllegalStateException} and never calls the deleter again. Closing after a consume or an
 * import does nothing, so try-with-resources is always safe. An export forgotten before it was
 * handed on is released by the safety net after garbage collection and reported as a leak.
 *
 * <p>This is the exporting direction's type, and {@link ImportedTensor} the importing one's. A
 * pointer from a foreign producer has no type of its own: {@link ImportedTensor#of} takes it and
 * validates it at once, and {@link ImportedTensor#discard} calls its deleter without reading it.
 *
 * {@snippet :
 * try (ExportedTensor export = owner.export(spec)) {   // the struct, shape and strides, in one allocation
 *     nativeLibrary.consume(export.consume());           // from now on the library calls the deleter
 * }                                                      // does nothing: the pointer was handed on
 * }
 *
 * <p>Thread safety: every method may be called from any thread; racing consume, import and close
 * calls are decided by one atomic transition, and exactly one of them wins.
 *
 * @since 0.1
 */
public final class ExportedTensor implements AutoCloseable {

    private final OwnershipCell cell;

    ExportedTensor(ManagedTensorKind kind, long address) {
        // The cell watches this object: forgotten while it still owns the pointer, it is released by the safety net.
        this.cell = OwnershipCell.claim(kind, address, "ExportedTensor", this, null);
    }

    /** {@return which struct the pointer refers to} */
    public ManagedTensorKind kind() {
        return cell.kind();
    }

    /** {@return the struct's address, whether or not the handle still owns it} */
    public long address() {
        return cell.address();
    }

    /** {@return whether this object still owns its pointer: not consumed, imported or closed} */
    public boolean isOwned() {
        return cell.state() == OwnershipCell.OWNED;
    }

    /**
     * Hands the pointer on: from now on whoever receives it must call its deleter exactly once.
     *
     * @return the pointer, as a zero-length segment to pass to a downcall
     * @throws IllegalStateException if this object no longer owns the pointer
     */
    public MemorySegment consume() {
        moveOut("consume");
        return MemorySegment.ofAddress(cell.address());
    }

    /**
     * Takes the export into an imported tensor with the default lifetime,
     * {@link ImportLifetime#CONFINED}: the same as
     * {@code ImportedTensor.of(kind(), consume())}, without a moment in which Java does not own
     * the pointer.
     *
     * @return the tensor; close it on this thread
     * @throws IllegalStateException if this object no longer owns the pointer
     */
    public ImportedTensor importTensor() {
        return importTensor(ImportLifetime.CONFINED);
    }

    /**
     * Takes the export into an imported tensor with the given lifetime: the same as
     * {@code ImportedTensor.of(kind(), consume(), lifetime)}, without a moment in which Java does
     * not own the pointer.
     *
     * @param lifetime who ends the tensor's life, and on which threads it may be used
     * @return the tensor
     * @throws IllegalStateException if this object no longer owns the pointer, or the caller's
     *                               arena is closed (the deleter has run)
     * @throws WrongThreadException  if the caller's arena is confined to another thread (the
     *                               deleter has run)
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
        return Importer.takeClaimed(cell.kind(), cell.address(), ticket, lifetime);
    }

    private void moveOut(String what) {
        try {
            if (!cell.move()) {
                throw new IllegalStateException("cannot " + what + ": " + describeState());
            }
        } finally {
            // The safety net watches this object: without the fence the JIT may treat it as dead
            // once the cell is loaded, and a GC at this point would let the net release the pointer
            // that this call is moving.
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Calls the deleter if this object still owns the pointer (the export is withdrawn); does
     * nothing if the pointer was consumed or imported.
     *
     * @throws IllegalStateException if already closed
     */
    @Override
    public void close() {
        try {
            if (cell.callDeleter()) {
                return;
            }
            if (cell.state() == OwnershipCell.DELETED) {
                throw new IllegalStateException("this ExportedTensor (" + cell.kind().structName() + " at 0x" + Long.toHexString(cell.address()) + ") was already closed; its deleter has run once");
            }
        } finally {
            Reference.reachabilityFence(this); // see moveOut
        }
    }

    private String describeState() {
        return switch (cell.state()) {
            case OwnershipCell.MOVED -> "the " + cell.kind().structName() + " at 0x" + Long.toHexString(cell.address())
                    + " was already consumed or imported";
            case OwnershipCell.DELETED -> "it was closed and its deleter has run";
            default -> "owned";
        };
    }

    @Override
    public String toString() {
        return "ExportedTensor[" + cell.kind().structName() + " at 0x" + Long.toHexString(cell.address()) + ", "
                + (isOwned() ? "owned" : describeState()) + "]";
    }
}
