package org.jdlpack.abi;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The single ownership state of one managed-tensor pointer held by one Java object: OWNED, then
 * exactly one of MOVED (handed to someone else) or DELETED (deleter called). Each transition is a
 * compare-and-set, so of any number of racing attempts exactly one wins; the winner drops the
 * pointer's claim in {@link OwnedPointers} (before the deleter, when it calls one) or, handing
 * over, passes the claim on.
 *
 * <p>The state machine is written once, here ({@link #move}, {@link #handOver},
 * {@link #callDeleter}); an implementation says only where its state word lives and what leaving
 * OWNED settles for it ({@link #leave}). Two kinds, because the safety net's kind can never be
 * taken off the heap: {@link OwnershipCell} is also its own safety-net entry, a phantom reference,
 * for owners that can be forgotten (a handle, an imported tensor with an arena of its own), and the
 * JIT always keeps {@code java.lang.ref.Reference} objects on the heap; {@link PlainOwnership} is an
 * ordinary object for owners that cannot be forgotten (a scoped import, an import into a caller's
 * arena), which escape analysis removes when the import is inlined. Not sealed: that would make
 * this interface name its kinds, which use {@link OwnedPointers}, which asks of an owner only what
 * {@link OwnedPointers.Owner} says.
 *
 * <p>Thread safety: every method may be called from any thread.
 */
interface Ownership extends OwnedPointers.Owner {

    int OWNED = 0;
    int MOVED = 1;
    int DELETED = 2;

    /**
     * {@return the handle of an implementation's state word, its {@code volatile int word} field}
     * For the implementations' class initializers: each keeps the word in its own class, since one
     * must be a phantom reference (the safety net's entry) and the other must not be one.
     *
     * @param lookup the implementation's own lookup ({@code MethodHandles.lookup()})
     */
    static VarHandle stateWord(MethodHandles.Lookup lookup) {
        try {
            return lookup.findVarHandle(lookup.lookupClass(), "word", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Bits of the word that hold the state. */
    int STATE_BITS = 0b11;
    /** The bit of the word that says the struct is a legacy {@code DLManagedTensor}. */
    int LEGACY_BIT = 0b100;
    /**
     * The ticket is stored plus two above the state and kind: {@link OwnedPointers#SPILLED} (-1)
     * then fits, and every word written is at least {@code 1 << TICKET_SHIFT}, never 0, so that an
     * owner read before its word was written (a publication race) is told from every real owner.
     */
    int TICKET_SHIFT = 3;

    /**
     * {@return the state word of a new owner, OWNED} One int holds the state, the kind and the
     * ticket, which never change after this: an owner is one field smaller per import than with
     * three, and both implementations read kind and ticket here instead of each keeping them.
     *
     * @param kind   which struct the pointer points to
     * @param ticket what {@link OwnedPointers#claim} returned for the address
     */
    static int ownedWord(ManagedTensorKind kind, int ticket) {
        return (ticket + 2) << TICKET_SHIFT | (kind == ManagedTensorKind.LEGACY ? LEGACY_BIT : 0) | OWNED;
    }

    /**
     * {@return the OWNED form of a word read from {@code owner}: its kind and ticket, state OWNED}
     * For {@link #leave}, before its compare-and-set: one compare of the word already read. A word
     * whose kind and ticket are 0 was never written by {@link #ownedWord}: taken as it is, it would
     * read as an owned versioned struct (whose deleter sits elsewhere than a legacy one's), so it is
     * refused before anything is called.
     *
     * @param word  the word read
     * @param owner whose word it is, named in the exception
     * @throws IllegalStateException if the word was never written
     */
    static int ownedPart(int word, Ownership owner) {
        int owned = word & ~STATE_BITS;
        if (owned == 0) {
            throw unwritten(word, owner);
        }
        return owned;
    }

    /** {@return the exception for a word never written} Out of line: the hot path keeps only the compare. */
    private static IllegalStateException unwritten(int word, Ownership owner) {
        return new IllegalStateException("the ownership state word of the owner of 0x" + Long.toHexString(owner.address())
                + " is " + word + ", never written (the owner was read before its construction was published); "
                + "no deleter is called and no ownership moves");
    }

    /** {@return the state word: OWNED, MOVED or DELETED in {@link #STATE_BITS}, the kind and the ticket above (see {@link #ownedWord})} */
    int word();

    /** {@return which struct the pointer points to} */
    default ManagedTensorKind kind() {
        return (word() & LEGACY_BIT) != 0 ? ManagedTensorKind.LEGACY : ManagedTensorKind.VERSIONED;
    }

    /** {@return OWNED, MOVED or DELETED} */
    default int state() {
        return word() & STATE_BITS;
    }

    /** {@return this owner's entry in {@link OwnedPointers}: what {@link OwnedPointers#claim} returned for the address} */
    default int ticket() {
        return (word() >> TICKET_SHIFT) - 2;
    }

    /**
     * For the implementations, not the callers: the one compare-and-set of this owner's state
     * word from OWNED to {@code to} (kind and ticket kept) and, when it wins, what this kind
     * settles on leaving OWNED (its ledger entry). Nothing else: the claim and the deleter are the state machine's.
     * The word read goes through {@link #ownedPart}.
     *
     * @param to MOVED or DELETED
     * @return whether this call won
     * @throws IllegalStateException if the word was never written ({@link #ownedPart})
     */
    boolean leave(int to);

    /**
     * Gives up ownership without calling the deleter: the pointer leaves Java (consumed by native code).
     *
     * @return whether this call won
     * @throws IllegalStateException if the state word was never written ({@link #ownedPart})
     */
    default boolean move() {
        if (!leave(MOVED)) {
            return false;
        }
        OwnedPointers.drop(address(), ticket());
        return true;
    }

    /**
     * Gives up ownership to another owner inside Java, keeping the claim on the address for it, so
     * that no other take can slip in between.
     *
     * @return the ticket for the next owner, or {@link Integer#MIN_VALUE} if this one no longer owns the pointer
     * @throws IllegalStateException if the state word was never written ({@link #ownedPart})
     */
    default int handOver() {
        return leave(MOVED) ? ticket() : Integer.MIN_VALUE;
    }

    /**
     * Calls the deleter, unless ownership already moved or the deleter was called. Never throws but
     * for a state word never written, where nothing is called.
     *
     * @return whether this call won
     * @throws IllegalStateException if the state word was never written ({@link #ownedPart})
     */
    default boolean callDeleter() {
        if (!leave(DELETED)) {
            return false;
        }
        // Before the deleter: the producer may reuse the address for its next tensor at once.
        OwnedPointers.drop(address(), ticket());
        ForeignDeleters.call(kind(), address());
        return true;
    }

    @Override
    default boolean ownsAddress() {
        return state() == OWNED;
    }
}
