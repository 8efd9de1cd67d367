package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.jdlpack.testsupport.Race;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** One owner at a time, one deleter call: every second attempt is an IllegalStateException. */
@ExtendWith(NothingLeftBehind.class)
class OwnershipTest {

    private static final CPeer PEER = CPeer.get();

    @Test
    void aStatsSnapshotCountsWhatIsHeldAndSaysSoInOneLine() {
        assertThat(DLPackStats.snapshot().isQuiet()).isTrue();
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            DLPackStats.Snapshot held = DLPackStats.snapshot();
            assertThat(held.ownedManagedTensors()).as(tensor.toString()).isEqualTo(1);
            assertThat(held.isQuiet()).isFalse();
            assertThat(held.toString()).startsWith("DLPackStats[liveExports=0, exportHeaderBytes=0, ownedManagedTensors=1,");
        }
        assertThat(DLPackStats.snapshot().isQuiet()).isTrue();
    }

    @Test
    void theStateWordKeepsKindAndTicketThroughEveryTransition() {
        // One int holds state, kind and ticket: the edges are a spilled claim (-1) and the table's last entry.
        // Never claimed or called: an owner that hands over touches neither the table nor a deleter.
        for (ManagedTensorKind kind : ManagedTensorKind.values()) {
            for (int ticket : new int[] {OwnedPointers.SPILLED, 0, 8, 8 + 2048 * 8 - 1}) {
                PlainOwnership owner = new PlainOwnership(kind, 0x1000, ticket);
                assertThat(owner.kind()).isEqualTo(kind);
                assertThat(owner.ticket()).isEqualTo(ticket);
                assertThat(owner.state()).isEqualTo(Ownership.OWNED);
                assertThat(owner.handOver()).isEqualTo(ticket);
                assertThat(owner.state()).isEqualTo(Ownership.MOVED);
                assertThat(owner.kind()).isEqualTo(kind);
                assertThat(owner.handOver()).as("a second hand-over loses").isEqualTo(Integer.MIN_VALUE);
                assertThat(owner.ticket()).isEqualTo(ticket);
                assertThat(Ownership.ownedWord(kind, ticket)).as("a written word is never 0").isGreaterThanOrEqualTo(1 << Ownership.TICKET_SHIFT);
                assertThat(owner.word() & ~Ownership.STATE_BITS).isEqualTo(Ownership.ownedWord(kind, ticket));
            }
        }
    }

    @Test
    void aStateWordNeverWrittenIsRefusedBeforeAnythingIsCalled() throws ReflectiveOperationException {
        // A 0 word would decode as an owned versioned struct with a spilled claim: an owner read
        // before its word was written (a publication race) must not call a deleter or move.
        PlainOwnership plain = new PlainOwnership(ManagedTensorKind.LEGACY, 0x1000, 0);
        OwnershipCell cell = new OwnershipCell(ManagedTensorKind.LEGACY, 0x2000, 0, "OwnershipTest", null, null);
        for (Ownership owner : List.<Ownership>of(plain, cell)) {
            VarHandle word = Ownership.stateWord(MethodHandles.privateLookupIn(owner.getClass(), MethodHandles.lookup()));
            int written = owner.word();
            for (int unwritten : new int[] {0, Ownership.MOVED, Ownership.DELETED}) {
                word.setVolatile(owner, unwritten);
                String name = "the ownership state word of the owner of 0x" + Long.toHexString(owner.address()) + " is " + unwritten
                        + ", never written";
                assertThatThrownBy(owner::callDeleter).isInstanceOf(IllegalStateException.class).hasMessageStartingWith(name);
                assertThatThrownBy(owner::move).isInstanceOf(IllegalStateException.class).hasMessageStartingWith(name);
                assertThatThrownBy(owner::handOver).isInstanceOf(IllegalStateException.class).hasMessageStartingWith(name);
                assertThat(owner.word()).as("refused, not changed").isEqualTo(unwritten);
            }
            word.setVolatile(owner, written);
            assertThat(owner.handOver()).isZero(); // settles the cell's ledger entry; touches neither the table nor a deleter
        }
    }

    @Test
    void doubleCloseCallsTheDeleterOnce() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer());
        tensor.close();
        assertThatThrownBy(tensor::close).isInstanceOf(IllegalStateException.class).hasMessageContaining("already closed");
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @RepeatedTest(20)
    void sharedCloseRacingCloseFromEightThreadsCallsTheDeleterOnce() throws InterruptedException {
        CPeer.Produced produced = PEER.make(PeerTensor.legacy());
        ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.LEGACY, produced.pointer(), ImportLifetime.SHARED);
        assertThat(Race.run(8, tensor::close)).isEqualTo(new Race.Outcome(1, 7));
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void consumeAfterConsumeIsRefused() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        ExportedTensor handle = PeerHandles.holding(ManagedTensorKind.VERSIONED, produced.pointer());
        MemorySegment pointer = handle.consume();
        assertThatThrownBy(handle::consume).isInstanceOf(IllegalStateException.class).hasMessageContaining("already consumed");
        assertThatThrownBy(handle::importTensor).isInstanceOf(IllegalStateException.class);
        handle.close(); // consumed: the new owner calls the deleter, not the handle
        assertThat(PEER.deleterCalls(produced.id())).isZero();
        PEER.delete(pointer, false);
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void closingAnUnconsumedForeignHandleCallsTheDeleterOnce() {
        CPeer.Produced produced = PEER.make(PeerTensor.legacy());
        ExportedTensor handle = PeerHandles.holding(ManagedTensorKind.LEGACY, produced.pointer());
        handle.close();
        assertThatThrownBy(handle::close).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(handle::consume).isInstanceOf(IllegalStateException.class);
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @RepeatedTest(20)
    void consumeRacingCloseHasExactlyOneWinner() throws InterruptedException {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        ExportedTensor handle = PeerHandles.holding(ManagedTensorKind.VERSIONED, produced.pointer());
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger consumed = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            boolean closer = i % 2 == 0;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    if (closer) {
                        handle.close();
                    } else {
                        handle.consume();
                        consumed.incrementAndGet();
                    }
                } catch (IllegalStateException e) {
                    // lost the race
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        start.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        if (consumed.get() == 1) {
            assertThat(PEER.deleterCalls(produced.id())).isZero();
            PEER.delete(produced.pointer(), false);
        } else {
            assertThat(consumed).hasValue(0);
        }
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void aTensorInACallersArenaLivesUntilThatArenaCloses() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        ImportedTensor tensor;
        try (Arena arena = Arena.ofConfined()) {
            tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer(), ImportLifetime.in(arena));
            tensor.close(); // try-with-resources safe: the arena, not the tensor, decides
            assertThat(tensor.isAlive()).isTrue();
            assertThat(tensor.hostSegment().scope()).isEqualTo(arena.scope());
            assertThat(PEER.deleterCalls(produced.id())).isZero();
        }
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
        assertThat(tensor.isAlive()).isFalse();
    }

    @Test
    void aDiscardedPointerHasItsDeleterCalledOnceAndAPointerJavaOwnsIsNotDiscarded() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        ImportedTensor.discard(ManagedTensorKind.VERSIONED, produced.pointer());
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);

        CPeer.Produced owned = PEER.make(PeerTensor.legacy());
        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.LEGACY, owned.pointer())) {
            assertThatThrownBy(() -> ImportedTensor.discard(ManagedTensorKind.LEGACY, owned.pointer()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("already owned");
            assertThat(PEER.deleterCalls(owned.id())).as(tensor.toString()).isZero();
        }
        assertThat(PEER.deleterCalls(owned.id())).isEqualTo(1);
        assertThatThrownBy(() -> ImportedTensor.discard(ManagedTensorKind.LEGACY, MemorySegment.NULL))
                .isInstanceOf(IllegalArgumentException.class);

        // A NULL deleter is never called.
        CPeer.Produced noDeleter = PEER.make(PeerTensor.versioned().nullDeleter());
        ImportedTensor.discard(ManagedTensorKind.VERSIONED, noDeleter.pointer());
        assertThat(PEER.deleterCalls(noDeleter.id())).isZero();
    }

    @Test
    void importingIntoAClosedArenaStillCallsTheDeleter() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        Arena arena = Arena.ofConfined();
        arena.close();
        assertThatThrownBy(() -> ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer(), ImportLifetime.in(arena)))
                .isInstanceOf(IllegalStateException.class);
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }
}
