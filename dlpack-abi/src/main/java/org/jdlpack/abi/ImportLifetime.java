package org.jdlpack.abi;

import java.lang.foreign.Arena;
import java.util.Objects;

/**
 * How long an {@link ImportedTensor} and its segments live, and who may end that: the one option
 * of {@link ImportedTensor#of(ManagedTensorKind, java.lang.foreign.MemorySegment, ImportLifetime)}.
 *
 * <ul>
 *   <li>{@link #CONFINED}, the default: the tensor has a confined arena of its own. Only the
 *       importing thread may read its segments and close it; closing is a plain state change.
 *       A forgotten tensor is released by the safety net after garbage collection.</li>
 *   <li>{@link #SHARED}: the tensor has a shared arena of its own; any thread may read and close
 *       it. Closing a shared arena is a handshake with every JVM thread (orders of magnitude slower
 *       than a confined close, and growing with the thread count), so use it only for tensors that
 *       really cross threads.</li>
 *   <li>{@link #in(Arena)}: the tensor lives exactly as long as an arena the caller owns; closing
 *       that arena calls the deleter of every tensor imported into it. A shared arena holding
 *       many tensors pays one handshake for all of them.</li>
 * </ul>
 *
 * <p>Instances are immutable and safe to share between threads.
 *
 * @since 0.1
 */
public final class ImportLifetime {

    /** Confined to the importing thread, with a safety net: the default. */
    public static final ImportLifetime CONFINED = new ImportLifetime(Mode.CONFINED, null);

    /** Usable and closable from any thread; each close is a JVM-wide handshake. */
    public static final ImportLifetime SHARED = new ImportLifetime(Mode.SHARED, null);

    enum Mode { CONFINED, SHARED, ARENA }

    private final Mode mode;
    private final Arena arena;

    private ImportLifetime(Mode mode, Arena arena) {
        this.mode = mode;
        this.arena = arena;
    }

    /**
     * The lifetime of an arena the caller owns: closing it calls the deleters of the tensors
     * imported into it, and {@link ImportedTensor#close()} leaves them to it. With a confined
     * arena only its owner thread may import into it.
     *
     * @param arena the arena; it must be able to close
     * @return the lifetime
     * @throws IllegalArgumentException if {@code arena} is the global arena, which never closes
     *                                  and so would never call a deleter
     */
    public static ImportLifetime in(Arena arena) {
        Objects.requireNonNull(arena, "arena");
        if (arena.scope().equals(Arena.global().scope())) {
            throw new IllegalArgumentException("cannot import into Arena.global(): it never closes, so the producer's deleter"
                    + " would never run; use ImportLifetime.CONFINED, ImportLifetime.SHARED or an arena you close");
        }
        return new ImportLifetime(Mode.ARENA, arena);
    }

    Mode mode() {
        return mode;
    }

    /** {@return the caller's arena, or null for a lifetime with an arena of its own} */
    Arena arena() {
        return arena;
    }

    @Override
    public String toString() {
        return mode == Mode.ARENA ? "ImportLifetime.in(" + arena + ")" : "ImportLifetime." + mode;
    }
}
