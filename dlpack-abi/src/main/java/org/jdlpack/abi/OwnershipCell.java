package org.jdlpack.abi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.PhantomReference;

import org.jdlpack.abi.internal.Counters;
import org.jdlpack.abi.internal.LeakTracking;

/**
 * The single ownership state of one managed-tensor pointer held by one Java object: OWNED, then
 * exactly one of MOVED (handed to someone else) or RELEASED (deleter called). The transition is a
 * compare-and-set, so of any number of racing attempts exactly one wins.
 *
 * <p>The cell is also its own safety-net entry: a phantom reference to the object whose
 * unreachability means "forgotten" (a handle, or the scope of an imported tensor's arena). One
 * object per owned pointer does both jobs, where a {@code Cleaner} registration would add a
 * cleanable and an action lambda per import. A cell created without a watched object (imports
 * into a caller's arena, scoped imports) is not in the safety net.
 */
final class OwnershipCell extends PhantomReference<Object> {

    static final int OWNED = 0;
    static final int MOVED = 1;
    static final int RELEASED = 2;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(OwnershipCell.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final ManagedTensorKind kind;
    final long address;
    /** Who owns the pointer, for messages: a constant, so naming it allocates nothing. */
    final String owner;
    /** Where the owner was created, when leak tracking is on; else null. */
    final Throwable creationSite;
    /** Describes the tensor in a leak report (its validated fields), or null; never the watched object. */
    final Object detail;
    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    // Safety-net list links, guarded by the stripe's lock; stripe is null when not watched.
    final SafetyNet.Stripe stripe;
    OwnershipCell netPrev;
    OwnershipCell netNext;
    boolean linked;

    /**
     * A cell that owns {@code address}.
     *
     * @param watched the object whose unreachability, while still OWNED, is a leak; or null for
     *                an owner that cannot be forgotten (a caller's arena, a scoped import)
     * @param detail  what a leak report adds to the owner's name, or null
     */
    OwnershipCell(ManagedTensorKind kind, long address, String owner, Object watched, Object detail) {
        super(watched, watched == null ? null : SafetyNet.queue());
        this.kind = kind;
        this.address = address;
        this.owner = owner;
        this.detail = detail;
        // Guarded here, not only inside track(): the description lambda would be allocated on
        // every handle and import even with tracking off.
        this.creationSite = LeakTracking.isEnabled()
                ? LeakTracking.track(this, () -> owner + "(" + kind.structName() + " at 0x" + Long.toHexString(address) + ")")
                : null;
        Counters.OWNED_MANAGED_TENSORS.increment();
        this.stripe = watched == null ? null : SafetyNet.register(this);
    }

    /** Gives up ownership without calling the deleter. */
    boolean move() {
        if (STATE.compareAndSet(this, OWNED, MOVED)) {
            leaveOwnedState();
            return true;
        }
        return false;
    }

    /** Calls the deleter, unless ownership already moved or was released. Never throws. */
    boolean release() {
        if (STATE.compareAndSet(this, OWNED, RELEASED)) {
            leaveOwnedState();
            ForeignDeleters.call(kind, address);
            return true;
        }
        return false;
    }

    private void leaveOwnedState() {
        if (stripe != null) {
            stripe.remove(this);
        }
        Counters.OWNED_MANAGED_TENSORS.decrement();
        LeakTracking.untrack(this);
    }

    int state() {
        return (int) STATE.getVolatile(this);
    }

    /** What a leak report says about the forgotten owner; built only when there is a leak. */
    String describe() {
        return owner + "(" + kind.structName() + " at 0x" + Long.toHexString(address) + (detail == null ? "" : ", " + detail) + ")";
    }
}
