package org.jdlpack.abi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.jdlpack.abi.plumbing.Ledger;

/**
 * The ownership of a pointer whose owner cannot be forgotten, so needs no safety net: a scoped
 * import ({@link ImportedTensor#apply}), whose action's end releases it, and an import into a
 * caller's arena, which that arena releases. An ordinary object (not a phantom reference like
 * {@link OwnershipCell}), so that a scoped import inlined into its caller allocates nothing.
 * With leak tracking on it is listed, with its creation site, until its state leaves OWNED.
 *
 * The transitions are {@link Ownership}'s; this class is the state word and the tracking.
 *
 * <p>Thread safety: as {@link Ownership}.
 */
final class PlainOwnership implements Ownership {

    private static final VarHandle STATE = Ownership.stateWord(MethodHandles.lookup());

    private final ManagedTensorKind kind;
    private final long address;
    /** This owner's entry in {@link OwnedPointers}, dropped when the state leaves OWNED. */
    private final int ticket;
    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    /**
     * @param ticket what {@link OwnedPointers#claim} returned for {@code address}, which the caller claimed
     */
    PlainOwnership(ManagedTensorKind kind, long address, int ticket) {
        this.kind = kind;
        this.address = address;
        this.ticket = ticket;
        if (Ledger.trackingEnabled()) {
            Ledger.track(this, this::describe);
        }
    }

    @Override
    public ManagedTensorKind kind() {
        return kind;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public int state() {
        return (int) STATE.getVolatile(this);
    }

    @Override
    public int ticket() {
        return ticket;
    }

    /** Leaving OWNED takes this owner off leak tracking's list. */
    @Override
    public boolean leave(int to) {
        if (STATE.compareAndSet(this, OWNED, to)) {
            Ledger.untrack(this);
            return true;
        }
        return false;
    }

    /** What tracking lists this owner as. */
    private String describe() {
        return "ImportedTensor(" + kind.structName() + " at 0x" + Long.toHexString(address) + ")";
    }
}
