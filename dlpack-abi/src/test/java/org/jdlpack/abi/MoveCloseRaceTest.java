package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code moveTo} racing {@code close} and another {@code moveTo} on one SHARED import. The
 * tensor's arena is ended by whichever call comes first, and the cell's state is set just after;
 * a loser that judged by the arena alone said "already closed; its deleter has run" (869 of 1,000
 * close-against-move rounds) while the tensor had been moved and its deleter had not run. Now a
 * losing close does nothing, as after any move, and a losing move says the tensor was moved.
 */
@ExtendWith(NothingLeftBehind.class)
class MoveCloseRaceTest {

    private static final CPeer PEER = CPeer.get();
    private static final int ROUNDS = 1_000;

    @Test
    void aCloseLosingToAMoveDoesNothing() throws InterruptedException {
        List<String> wrong = new ArrayList<>();
        int moved = 0;
        for (int round = 0; round < ROUNDS; round++) {
            CPeer.Produced produced = PEER.make(PeerTensor.versioned());
            ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer(), ImportLifetime.SHARED);
            AtomicReference<Object> move = new AtomicReference<>();
            AtomicReference<Object> close = new AtomicReference<>();
            race(() -> move.set(attempt(() -> tensor.moveTo(ImportLifetime.SHARED))), () -> close.set(attempt(() -> {
                tensor.close();
                return null;
            })));
            if (move.get() instanceof ImportedTensor next) {
                moved++;
                if (close.get() != null) {
                    wrong.add("round " + round + ": the move won and close threw " + close.get());
                }
                assertThat(PEER.deleterCalls(produced.id())).as("moved, not deleted").isZero();
                next.close();
            } else if (!(move.get() instanceof IllegalStateException refused) || !refused.getMessage().contains("was closed and its deleter has run")) {
                wrong.add("round " + round + ": the close won and the move said " + move.get());
            }
            assertThat(PEER.deleterCalls(produced.id())).as("round %d", round).isEqualTo(1);
        }
        assertThat(wrong).isEmpty();
        assertThat(moved).as("rounds the move won").isPositive();
    }

    @Test
    void aMoveLosingToAMoveSaysTheTensorWasMoved() throws InterruptedException {
        List<String> wrong = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            CPeer.Produced produced = PEER.make(PeerTensor.versioned());
            ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer(), ImportLifetime.SHARED);
            AtomicReference<Object> first = new AtomicReference<>();
            AtomicReference<Object> second = new AtomicReference<>();
            race(() -> first.set(attempt(() -> tensor.moveTo(ImportLifetime.SHARED))),
                    () -> second.set(attempt(() -> tensor.moveTo(ImportLifetime.SHARED))));
            List<ImportedTensor> winners = new ArrayList<>();
            for (Object outcome : List.of(first.get(), second.get())) {
                if (outcome instanceof ImportedTensor next) {
                    winners.add(next);
                } else if (!(outcome instanceof IllegalStateException refused) || !refused.getMessage().contains("moved")
                        || refused.getMessage().contains("deleter has run")) {
                    wrong.add("round " + round + ": the losing move said " + outcome);
                }
            }
            assertThat(winners).as("round %d", round).hasSize(1);
            assertThat(PEER.deleterCalls(produced.id())).isZero();
            winners.get(0).close();
            assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
        }
        assertThat(wrong).isEmpty();
    }

    /** {@return what the call returned, or the exception it threw} */
    private static Object attempt(java.util.function.Supplier<Object> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            return e;
        }
    }

    private static void race(Runnable a, Runnable b) throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (Runnable action : List.of(a, b)) {
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                action.run();
            }));
        }
        start.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
    }
}
