package org.jdlpack.abi.plumbing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link ScopeHold}: while the action runs, the held segments' arenas cannot be closed from
 * another thread (their {@code close()} throws and frees nothing); afterwards they close as usual.
 * The closes run on real threads against real shared arenas: the FFM runtime's own refusal is
 * what is asserted.
 */
@ExtendWith(NothingLeftBehind.class)
class ScopeHoldTest {

    /** Tries to close {@code arena} on another thread; {@return what that close threw, or null if it closed} */
    private static RuntimeException closeOnAnotherThread(Arena arena) throws InterruptedException {
        AtomicReference<RuntimeException> thrown = new AtomicReference<>();
        Thread closer = Thread.ofPlatform().start(() -> {
            try {
                arena.close();
            } catch (RuntimeException e) {
                thrown.set(e);
            }
        });
        closer.join();
        return thrown.get();
    }

    @Test
    void heldArenasRefuseToCloseUntilTheActionReturns() throws Exception {
        // Five arenas: three nested downcalls (two segments each, the last with one).
        List<Arena> arenas = new ArrayList<>();
        MemorySegment[] segments = new MemorySegment[5];
        for (int i = 0; i < segments.length; i++) {
            Arena arena = Arena.ofShared();
            arenas.add(arena);
            segments[i] = arena.allocate(64);
        }
        List<RuntimeException> refusals = new ArrayList<>();
        ScopeHold.during(segments, () -> {
            for (Arena arena : arenas) {
                refusals.add(closeOnAnotherThread(arena));
            }
        }, i -> new IllegalStateException("segment " + i));
        assertThat(refusals).hasSize(5).allSatisfy(e -> assertThat(e).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("acquired"));
        assertThat(segments).allMatch(segment -> segment.scope().isAlive());
        for (Arena arena : arenas) {
            assertThat(closeOnAnotherThread(arena)).as("released after the action").isNull();
        }
    }

    @Test
    void aClosedScopeIsRefusedByIndexBeforeTheActionRuns() {
        try (Arena open = Arena.ofShared()) {
            Arena closed = Arena.ofShared();
            MemorySegment gone = closed.allocate(8);
            closed.close();
            MemorySegment[] segments = {open.allocate(8), open.allocate(8), gone};
            boolean[] ran = {false};
            assertThatThrownBy(() -> ScopeHold.during(segments, () -> ran[0] = true, i -> new IllegalStateException("segment " + i)))
                    .isInstanceOf(IllegalStateException.class).hasMessage("segment 2");
            MemorySegment[] first = {gone, open.allocate(8)};
            assertThatThrownBy(() -> ScopeHold.during(first, () -> ran[0] = true, i -> new IllegalStateException("segment " + i)))
                    .hasMessage("segment 0");
            assertThat(ran[0]).as("the action never ran").isFalse();
        }
    }

    @Test
    void theActionsExceptionsAreRethrownAsTheyWere() {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] segments = {arena.allocate(8)};
            IOException checked = new IOException("from the action");
            assertThatThrownBy(() -> ScopeHold.during(segments, () -> {
                throw checked;
            }, i -> new IllegalStateException())).isSameAs(checked);
            StackOverflowError error = new StackOverflowError();
            assertThatThrownBy(() -> ScopeHold.during(segments, () -> {
                throw error;
            }, i -> new IllegalStateException())).isSameAs(error);
        }
    }

    @Test
    void holdsNestAndNothingIsHeldWithoutSegments() throws Exception {
        Arena inner = Arena.ofShared(); // closed by the test itself, once the inner hold ended
        try (Arena outer = Arena.ofShared()) {
            MemorySegment[] outerSegments = {outer.allocate(8)};
            MemorySegment[] innerSegments = {inner.allocate(8)};
            List<RuntimeException> seen = new ArrayList<>();
            ScopeHold.during(outerSegments, () -> {
                ScopeHold.during(innerSegments, () -> seen.add(closeOnAnotherThread(inner)), i -> new IllegalStateException());
                seen.add(closeOnAnotherThread(inner)); // the inner hold ended
            }, i -> new IllegalStateException());
            assertThat(seen.get(0)).hasMessageContaining("acquired");
            assertThat(seen.get(1)).isNull();
            assertThat(outer.scope().isAlive()).isTrue();
        }
        boolean[] ran = {false};
        ScopeHold.during(new MemorySegment[0], () -> ran[0] = true, i -> new IllegalStateException());
        assertThat(ran[0]).isTrue();
    }
}
