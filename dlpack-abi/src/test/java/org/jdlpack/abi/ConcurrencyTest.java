package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Eight Java threads and many native ones exporting, importing, consuming and closing at once:
 * no crash, every deleter and every release exactly once, clear exceptions for the losers, and
 * nothing left in the registries.
 */
@ExtendWith(NothingLeftBehind.class)
class ConcurrencyTest {

    private static final CPeer PEER = CPeer.get();
    private static final int THREADS = 8;
    private static final int ROUNDS = 300;

    @Test
    void everythingAtOnceStaysExactlyOnce() throws Exception {
        Arena arena = Arena.ofShared();
        MemorySegment data = arena.allocate(JAVA_FLOAT_UNALIGNED, 64);
        AtomicInteger sharedReleases = new AtomicInteger();
        ExportOwner shared = ExportOwner.of(arena, () -> {
            sharedReleases.incrementAndGet();
            arena.close();
        });
        TensorSpec spec = TensorSpec.of(data, DLDataType.FLOAT32, 8, 8);

        AtomicInteger ownerReleases = new AtomicInteger();
        AtomicInteger ownersMade = new AtomicInteger();
        AtomicLong refusals = new AtomicLong();
        Queue<ImportedTensor> handOff = new ConcurrentLinkedQueue<>();
        Queue<Integer> produced = new ConcurrentLinkedQueue<>();
        Queue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
        CyclicBarrier barrier = new CyclicBarrier(THREADS);

        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int me = t;
            threads.add(Thread.ofPlatform().name("concurrency-" + t).start(() -> {
                try {
                    barrier.await();
                    for (int round = 0; round < ROUNDS; round++) {
                        switch ((round + me) % 7) {
                            case 0 -> { // export of shared memory, deleted on a native thread while others export
                                MemorySegment pointer = shared.export(spec).consume();
                                PEER.join(PEER.deleteAsync(pointer, false));
                            }
                            case 1 -> { // our own export imported back, read, closed
                                try (ImportedTensor tensor = shared.export(spec, ExportOptions.LEGACY).importTensor()) {
                                    tensor.hostSegment().get(JAVA_FLOAT_UNALIGNED, 4 * 63);
                                }
                            }
                            case 2 -> { // a C tensor imported here as shared and closed by another thread, twice
                                CPeer.Produced made = PEER.make(PeerTensor.versioned());
                                produced.add(made.id());
                                handOff.add(ImportedTensor.of(ManagedTensorKind.VERSIONED, made.pointer(), ImportLifetime.SHARED));
                                ImportedTensor other = handOff.poll();
                                if (other != null) {
                                    closeRacing(other, refusals);
                                }
                            }
                            case 3 -> { // consume racing close on one handle
                                CPeer.Produced made = PEER.make(PeerTensor.legacy());
                                produced.add(made.id());
                                ExportedTensor handle = PeerHandles.holding(ManagedTensorKind.LEGACY, made.pointer());
                                CountDownLatch go = new CountDownLatch(1);
                                Thread closer = Thread.ofPlatform().start(() -> {
                                    awaitQuietly(go);
                                    try {
                                        handle.close();
                                    } catch (IllegalStateException e) {
                                        refusals.incrementAndGet();
                                    }
                                });
                                go.countDown();
                                try {
                                    MemorySegment pointer = handle.consume();
                                    PEER.delete(pointer, true);
                                } catch (IllegalStateException e) {
                                    refusals.incrementAndGet();
                                }
                                closer.join();
                            }
                            case 4 -> { // use after close from another thread: an exception, not a crash
                                ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED,
                                        PEER.make(PeerTensor.versioned()).pointer(), ImportLifetime.SHARED);
                                MemorySegment segment = tensor.hostSegment();
                                Thread closer = Thread.ofPlatform().start(tensor::close);
                                try {
                                    for (int i = 0; i < 100_000; i++) {
                                        segment.get(JAVA_FLOAT_UNALIGNED, 0);
                                    }
                                } catch (IllegalStateException expected) {
                                    refusals.incrementAndGet();
                                }
                                // JDK 25 also sets the interrupt status of a thread whose access a
                                // shared arena close cut short; that is the JDK's, not ours.
                                Thread.interrupted();
                                closer.join();
                            }
                            case 5 -> { // the default path: C tensors imported, read and closed on this
                                // thread (confined), while native threads run deleters of exports
                                CPeer.Produced made = PEER.make(PeerTensor.legacy());
                                produced.add(made.id());
                                long deleting = PEER.deleteAsync(shared.export(spec).consume(), false);
                                try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.LEGACY, made.pointer())) {
                                    tensor.hostSegment().get(JAVA_FLOAT_UNALIGNED, 20);
                                }
                                CPeer.Produced scoped = PEER.make(PeerTensor.versioned());
                                produced.add(scoped.id());
                                ImportedTensor.apply(ManagedTensorKind.VERSIONED, scoped.pointer(),
                                        imported -> imported.hostSegment().get(JAVA_FLOAT_UNALIGNED, 20));
                                PEER.join(deleting);
                            }
                            default -> { // an owner closed by Java while a native thread deletes its export
                                ownersMade.incrementAndGet();
                                ExportOwner owner = ExportOwner.of(ownerReleases::incrementAndGet);
                                MemorySegment pointer = owner.export(spec).consume();
                                long thread = PEER.deleteAsync(pointer, false);
                                owner.close();
                                PEER.join(thread);
                            }
                        }
                    }
                } catch (Throwable e) {
                    unexpected.add(e);
                }
            }));
        }
        for (Thread thread : threads) {
            thread.join();
        }
        ImportedTensor left;
        while ((left = handOff.poll()) != null) {
            left.close();
        }
        unexpected.forEach(Throwable::printStackTrace);
        assertThat(unexpected).as("unexpected failures").isEmpty();
        assertThat(ownerReleases).as("each owner released exactly once").hasValue(ownersMade.get());
        for (int id : produced) {
            assertThat(PEER.deleterCalls(id)).as("deleter calls of C tensor %d", id).isEqualTo(1);
        }
        assertThat(sharedReleases).hasValue(0);
        shared.close();
        assertThat(sharedReleases).hasValue(1);
        System.out.println("Concurrency: " + THREADS + " threads x " + ROUNDS + " rounds, " + refusals.get()
                + " clear refusals (IllegalStateException), no crash");
    }

    private static void closeRacing(ImportedTensor tensor, AtomicLong refusals) throws InterruptedException {
        Thread second = Thread.ofPlatform().start(() -> {
            try {
                tensor.close();
            } catch (IllegalStateException e) {
                refusals.incrementAndGet();
            }
        });
        try {
            tensor.close();
        } catch (IllegalStateException e) {
            refusals.incrementAndGet();
        }
        second.join();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
