package org.jdlpack.abi;

/**
 * The single ownership state of one managed-tensor pointer held by one Java object: OWNED, then
 * exactly one of MOVED (handed to someone else) or DELETED (deleter called). Each transition is a
 * compare-and-set, so of any number of racing attempts exactly one wins; the winner drops the
 * pointer's claim in {@link OwnedPointers}.
 *
 * <p>Two kinds, {@link OwnershipCell} and {@link PlainOwnership} (not a sealed list: that would make
 * this interface name them, and {@link OwnedPointers}, which both use, asks of an owner only what
 * this interface says), because the safety net's kind can never be taken off the heap:
 * {@link OwnershipCell} is also its own safety-net entry, a phantom reference, for owners that
 * can be forgotten (a handle, an imported tensor with an arena of its own), and the JIT always
 * keeps {@code java.lang.ref.Reference} objects on the heap; {@link PlainOwnership} is an ordinary
 * object for owners that cannot be forgotten (a scoped import, an import into a caller's arena),
 * which escape analysis removes when the import is inlined.
 *
 * <p>Thread safety: every method may be called from any thread.
 */
interface Ownership {

    int OWNED = 0;
    int MOVED = 1;
    int DELETED = 2;

    /** {@return which struct the pointer points to} */
    ManagedTensorKind kind();

    /** {@return the managed tensor's address} */
    long address();

    /** {@return OWNED, MOVED or DELETED} */
    int state();

    /** Gives up ownership without calling the deleter: the pointer leaves Java (consumed by native code). {@return whether this call won} */
    boolean move();

    /**
     * Gives up ownership to another owner inside Java, keeping the claim on the address for it, so
     * that no other take can slip in between.
     *
     * @return the ticket for the next owner, or {@link Integer#MIN_VALUE} if this one no longer owns the pointer
     */
    int handOver();

    /** Calls the deleter, unless ownership already moved or the deleter was called. Never throws. {@return whether this call won} */
    boolean callDeleter();
}
