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

    private final long address;
    /** {@link Ownership#word}: the state, the kind and the ticket (dropped in {@link OwnedPointers} when the state leaves OWNED). */
    private volatile int word;

    /**
     * @param ticket what {@link OwnedPointers#claim} returned for {@code address}, which the caller claimed
     */
    PlainOwnership(ManagedTensorKind kind, long address, int ticket) {
        this.address = address;
        // A release store, not a volatile one: a volatile store is a full fence on x86, once per
        // import. Whoever reads the owner got it through a final field or a lock, after this.
        STATE.setRelease(this, Ownership.ownedWord(kind, ticket));
        if (Ledger.trackingEnabled()) {
            Ledger.track(this, this::describe);
        }
    }

    @Override
    public int word() {
        return word;
    }

    /** Leaving OWNED takes this owner off leak tracking's list. */
    @Override
    public boolean leave(int to) {
        int owned = Ownership.ownedPart(word, this);
        if (STATE.compareAndSet(this, owned, owned | to)) {
            Ledger.untrack(this);
            return true;
        }
        return false;
    }

    @Override
    public long address() {
        return address;
    }

    /** What tracking lists this owner as. */
    private String describe() {
        return "ImportedTensor(" + kind().structName() + " at 0x" + Long.toHexString(address) + ")";
    }
}
