package org.jdlpack.abi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Function;

/**
 * Taking ownership of a managed-tensor pointer and making its {@link ImportedTensor}: claim the
 * address (a pointer Java owns is refused before anything is read or called), read and validate
 * the struct, then make the owner for the lifetime asked for. Every failure after the claim calls
 * the deleter exactly once.
 *
 * <p>Small methods on purpose: the whole import is meant to be inlined into its caller, so that
 * escape analysis can take the tensor, its fields and (for a scoped import) its ownership and
 * arena off the heap; a method the JIT finds too big stops that at its call.
 *
 * <p>Thread safety: stateless; any thread may import.
 */
final class Importer {

    private Importer() {
    }

    /** The address of a pointer that may be taken ownership of: native and not NULL. */
    static long checkedAddress(MemorySegment pointer) {
        if (!pointer.isNative() || pointer.address() == 0) {
            throw notAPointer(pointer);
        }
        return pointer.address();
    }

    private static IllegalArgumentException notAPointer(MemorySegment pointer) {
        return new IllegalArgumentException("a managed tensor pointer must be a non-NULL native address, got " + pointer);
    }

    /** Takes a pointer whose ownership was just moved to Java. */
    static ImportedTensor take(ManagedTensorKind kind, long address, ImportLifetime lifetime) {
        // First: a pointer Java already owns is refused before anything reads it or calls its deleter.
        return takeClaimed(kind, address, OwnedPointers.claim(kind, address), lifetime);
    }

    /** {@link #take} for a pointer already claimed in {@link OwnedPointers} (handed over by a handle or a move). */
    static ImportedTensor takeClaimed(ManagedTensorKind kind, long address, int ticket, ImportLifetime lifetime) {
        return owning(kind, address, ticket, readOrDelete(kind, address, ticket), lifetime);
    }

    /**
     * {@link ImportedTensor#apply}: claim, read, run the action, release. Everything a scoped
     * import makes after reading the struct (its ownership, its arena, the tensor, the segments
     * the action takes) is made and dropped inside this one method, where escape analysis can take
     * it off the heap; that is why the ownership is a {@link PlainOwnership} here, not a phantom
     * reference (which the JIT always keeps on the heap), and why this does not go through
     * {@link #takeClaimed}: every step of an import is hot enough to be compiled on its own, and C2
     * does not inline a method whose own compiled code is already large ({@code InlineSmallCode},
     * 2500 bytes on x86-64), so objects made in a composing step escape through its call. The
     * validated fields do escape: inlining the reader as well ran into C2's limit on the size of
     * one compilation ({@code NodeCountInliningCutoff}) before the action was inlined, and then
     * everything escaped (benchmarks/notes.md).
     */
    static <R> R applyScoped(ManagedTensorKind kind, long address, Function<? super ImportedTensor, ? extends R> action) {
        int ticket = OwnedPointers.claim(kind, address);
        ImportedFields fields = readOrDelete(kind, address, ticket);
        ImportedTensor tensor = new ImportedTensor(new PlainOwnership(kind, address, ticket), fields, Arena.ofConfined(), false);
        try {
            return action.apply(tensor);
        } finally {
            if (tensor.isAlive()) {
                tensor.close(); // unless the action closed or moved it
            }
        }
    }

    /** Reads and validates a claimed struct; on any failure drops the claim and calls the deleter, once, before rethrowing. */
    private static ImportedFields readOrDelete(ManagedTensorKind kind, long address, int ticket) {
        try {
            return ManagedTensorReader.read(kind, address);
        } catch (RuntimeException | Error e) {
            OwnedPointers.drop(address, ticket);
            ForeignDeleters.call(kind, address);
            throw e;
        }
    }

    /**
     * The tensor owning a claimed, validated pointer, with the given lifetime; if that lifetime
     * cannot be had (a caller's arena closed or confined to another thread), the deleter runs.
     */
    static ImportedTensor owning(ManagedTensorKind kind, long address, int ticket, ImportedFields fields, ImportLifetime lifetime) {
        return switch (lifetime.mode()) {
            case CONFINED -> ownArena(kind, address, ticket, fields, Arena.ofConfined());
            case SHARED -> ownArena(kind, address, ticket, fields, Arena.ofShared());
            case ARENA -> inCallersArena(kind, address, ticket, fields, lifetime.arena());
        };
    }

    /**
     * An arena of the tensor's own: {@link ImportedTensor#close()} ends it and then calls the
     * deleter, so no cleanup action is registered with the arena. The safety net watches the
     * scope, not the tensor: segments handed out keep the scope reachable, so the net cannot
     * release memory a live segment points to. The leak report names the tensor's fields.
     */
    private static ImportedTensor ownArena(ManagedTensorKind kind, long address, int ticket, ImportedFields fields, Arena arena) {
        OwnershipCell cell = new OwnershipCell(kind, address, ticket, "ImportedTensor", arena.scope(), fields);
        return new ImportedTensor(cell, fields, arena, false);
    }

    /** The caller's arena calls the deleter when it closes; the anchor segment only carries that cleanup. */
    private static ImportedTensor inCallersArena(ManagedTensorKind kind, long address, int ticket, ImportedFields fields, Arena arena) {
        PlainOwnership ownership = new PlainOwnership(kind, address, ticket);
        try {
            NativeMemory.at(address, kind.structSize(), arena, anchor -> ownership.callDeleter());
        } catch (RuntimeException | Error e) {
            ownership.callDeleter();
            throw e;
        }
        return new ImportedTensor(ownership, fields, arena, true);
    }
}
