package org.jdlpack.abi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Supplier;

import org.jdlpack.abi.internal.Counters;
import org.jdlpack.abi.internal.LeakTracking;

/**
 * The single ownership state of one managed-tensor pointer held by one Java object: OWNED, then
 * exactly one of MOVED (handed to someone else) or RELEASED (deleter called). The transition is a
 * compare-and-set, so of any number of racing attempts exactly one wins.
 *
 * <p>Kept apart from the handle or tensor that uses it so that a Cleaner action can hold it
 * without keeping that object reachable.
 */
final class OwnershipCell {

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
    /** Where the owner was created, when leak tracking is on; else null. */
    final Throwable creationSite;
    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    OwnershipCell(ManagedTensorKind kind, long address, String owner) {
        this.kind = kind;
        this.address = address;
        // Guarded here, not only inside track(): the description lambda would be allocated on
        // every handle and import even with tracking off.
        this.creationSite = LeakTracking.isEnabled()
                ? LeakTracking.track(this, () -> owner + "(" + kind.structName() + " at 0x" + Long.toHexString(address) + ")")
                : null;
        Counters.OWNED_MANAGED_TENSORS.increment();
    }

    /** Gives up ownership without calling the deleter. */
    boolean move() {
        if (STATE.compareAndSet(this, OWNED, MOVED)) {
            Counters.OWNED_MANAGED_TENSORS.decrement();
            LeakTracking.untrack(this);
            return true;
        }
        return false;
    }

    /** Calls the deleter, unless ownership already moved or was released. Never throws. */
    boolean release() {
        if (STATE.compareAndSet(this, OWNED, RELEASED)) {
            Counters.OWNED_MANAGED_TENSORS.decrement();
            LeakTracking.untrack(this);
            Deleters.call(kind, address);
            return true;
        }
        return false;
    }

    int state() {
        return (int) STATE.getVolatile(this);
    }

    /**
     * The Cleaner action: release what nobody closed, and say so. The description is built only
     * when there is a leak to report: on the hot path it would cost more than the exchange.
     */
    static Runnable leakAction(OwnershipCell cell, Supplier<String> what) {
        return () -> {
            if (cell.release()) {
                LeakTracking.reportLeak(what.get(), cell.creationSite);
            }
        };
    }
}
