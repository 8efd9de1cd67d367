package org.jdlpack.abi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.jdlpack.abi.plumbing.Ledger;


/**
 * The ownership of a pointer whose owner can be forgotten: the state word of {@link Ownership}'s
 * state machine, which holds the transitions.
 *
 * <p>The cell is also its own {@link Ledger} entry: a phantom reference to the object whose
 * unreachability means "forgotten" (a handle, or the scope of an imported tensor's arena). One
 * object per owned pointer does both jobs. Owners that cannot be forgotten (imports into a
 * caller's arena, scoped imports) use a {@link PlainOwnership} instead, which the JIT can take off
 * the heap.
 */
final class OwnershipCell extends Ledger.Entry implements Ownership {

    private static final VarHandle STATE = Ownership.stateWord(MethodHandles.lookup());

    private final long address;
    /** Who owns the pointer, for messages: a constant, so naming it allocates nothing. */
    final String owner;
    /** Describes the tensor in a leak report (its validated fields), or null; never the watched object. */
    final Object detail;
    /** {@link Ownership#word}: the state, the kind and the ticket (dropped in {@link OwnedPointers} when the state leaves OWNED by a deleter call or a move out of Java). */
    private volatile int word;

    /**
     * A cell that owns {@code address}, which the caller has claimed in {@link OwnedPointers}
     * (see {@link #claim}); the cell drops that claim when its state leaves OWNED.
     *
     * @param ticket  what {@link OwnedPointers#claim} returned for {@code address}
     * @param watched the object whose unreachability, while still OWNED, is a leak; or null for
     *                an owner that cannot be forgotten (a caller's arena, a scoped import)
     * @param detail  what a leak report adds to the owner's name, or null
     */
    OwnershipCell(ManagedTensorKind kind, long address, int ticket, String owner, Object watched, Object detail) {
        super(watched);
        this.address = address;
        // A release store, not a volatile one: a volatile store is a full fence on x86, once per
        // import. Whoever reads the owner got it through a final field or a lock, after this.
        STATE.setRelease(this, Ownership.ownedWord(kind, ticket));
        this.owner = owner;
        this.detail = detail;
        open();
    }

    /**
     * A new cell owning {@code address}, claimed first: a pointer Java already owns is refused.
     *
     * @throws IllegalStateException naming the address if another cell owns it; nothing is called
     */
    static OwnershipCell claim(ManagedTensorKind kind, long address, String owner, Object watched, Object detail) {
        int ticket = OwnedPointers.claim(kind, address);
        try {
            return new OwnershipCell(kind, address, ticket, owner, watched, detail);
        } catch (RuntimeException | Error e) {
            OwnedPointers.drop(address, ticket);
            throw e;
        }
    }

    @Override
    public long address() {
        return address;
    }

    /** Leaving OWNED settles the cell's ledger entry: the safety net no longer watches it. */
    @Override
    public boolean leave(int to) {
        int owned = Ownership.ownedPart(word, this);
        if (STATE.compareAndSet(this, owned, owned | to)) {
            settle();
            return true;
        }
        return false;
    }

    /** The safety net: the owner was forgotten while it still owned the pointer. */
    @Override
    protected void forgotten() {
        String what = describe(); // before the deleter: the report must not depend on what it frees
        if (callDeleter()) {
            Ledger.reportLeak(what, creationSite());
        }
    }

    @Override
    public int word() {
        return word;
    }

    /** What a leak report says about the forgotten owner; built only when there is a leak. */
    @Override
    protected String describe() {
        return owner + "(" + kind().structName() + " at 0x" + Long.toHexString(address) + (detail == null ? "" : ", " + detail) + ")";
    }
}
