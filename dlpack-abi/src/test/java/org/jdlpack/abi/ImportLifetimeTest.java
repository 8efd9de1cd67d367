package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Each import lifetime: confined by default (closing on another thread is refused and leaves the
 * tensor open), shared (any thread closes), a caller's arena (many tensors released together),
 * scoped (released when the action ends); use after release throws in every one of them.
 */
@ExtendWith(NothingLeftBehind.class)
class ImportLifetimeTest {

    private static final CPeer PEER = CPeer.get();

    private static <T> T onAnotherThread(java.util.concurrent.Callable<T> task) throws Exception {
        AtomicReference<Object> result = new AtomicReference<>();
        Thread thread = Thread.ofPlatform().start(() -> {
            try {
                result.set(task.call());
            } catch (Throwable t) {
                result.set(t);
            }
        });
        thread.join();
        @SuppressWarnings("unchecked")
        T value = (T) result.get();
        return value;
    }

    @Test
    void theDefaultTensorIsConfinedToTheImportingThread() throws Exception {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer());
        MemorySegment segment = tensor.hostSegment();

        Object closeElsewhere = onAnotherThread(() -> {
            tensor.close();
            return "closed";
        });
        assertThat(closeElsewhere).isInstanceOf(WrongThreadException.class);
        assertThat((Throwable) closeElsewhere).hasMessageContaining("ImportLifetime.SHARED");
        Object readElsewhere = onAnotherThread(() -> segment.get(JAVA_FLOAT_UNALIGNED, 0));
        assertThat(readElsewhere).isInstanceOf(WrongThreadException.class);
        // The refused close left the tensor open and the deleter uncalled.
        assertThat(tensor.isAlive()).isTrue();
        assertThat(PEER.deleterCalls(produced.id())).isZero();
        assertThat(segment.get(JAVA_FLOAT_UNALIGNED, 4)).isEqualTo(1f);

        tensor.close();
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
        assertThat(PEER.deleterThread(produced.id())).isEqualTo(PEER.currentThread());
        assertThatThrownBy(() -> segment.get(JAVA_FLOAT_UNALIGNED, 0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(tensor::close).isInstanceOf(IllegalStateException.class).hasMessageContaining("already closed");
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void aSharedTensorIsClosedByAnotherThread() throws Exception {
        CPeer.Produced produced = PEER.make(PeerTensor.legacy());
        ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.LEGACY, produced.pointer(), ImportLifetime.SHARED);
        MemorySegment segment = tensor.hostSegment();
        long[] closer = new long[1];
        Object result = onAnotherThread(() -> {
            assertThat(segment.get(JAVA_FLOAT_UNALIGNED, 8)).isEqualTo(2f); // readable there too
            closer[0] = PEER.currentThread();
            tensor.close();
            return "closed";
        });
        assertThat(result).isEqualTo("closed");
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
        assertThat(PEER.deleterThread(produced.id())).isEqualTo(closer[0]);
        assertThat(tensor.isAlive()).isFalse();
        assertThatThrownBy(() -> segment.get(JAVA_FLOAT_UNALIGNED, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void manyImportsIntoOneSharedArenaAreReleasedTogether() throws Exception {
        int threads = 4;
        int each = 50;
        Queue<CPeer.Produced> produced = new ConcurrentLinkedQueue<>();
        Queue<MemorySegment> segments = new ConcurrentLinkedQueue<>();
        Arena group = Arena.ofShared();
        ImportLifetime lifetime = ImportLifetime.in(group);
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    for (int i = 0; i < each; i++) {
                        CPeer.Produced made = PEER.make(PeerTensor.versioned());
                        produced.add(made);
                        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, made.pointer(), lifetime)) {
                            segments.add(tensor.hostSegment());
                        } // close() leaves the tensor to the group
                    }
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }));
        }
        for (Thread worker : workers) {
            worker.join();
        }
        assertThat(produced).hasSize(threads * each);
        assertThat(DLPackStats.ownedManagedTensors()).isEqualTo(threads * each);
        for (CPeer.Produced made : produced) {
            assertThat(PEER.deleterCalls(made.id())).isZero();
        }
        assertThat(segments.peek().get(JAVA_FLOAT_UNALIGNED, 20)).isEqualTo(5f);

        group.close(); // one handshake for all of them

        for (CPeer.Produced made : produced) {
            assertThat(PEER.deleterCalls(made.id())).isEqualTo(1);
        }
        for (MemorySegment segment : segments) {
            assertThatThrownBy(() -> segment.get(JAVA_FLOAT_UNALIGNED, 0)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aScopedImportIsReleasedWhenTheActionEndsEvenByAnException() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        MemorySegment[] escaped = new MemorySegment[1];
        float value = ImportedTensor.apply(ManagedTensorKind.VERSIONED, produced.pointer(), tensor -> {
            escaped[0] = tensor.hostSegment();
            assertThat(PEER.deleterCalls(produced.id())).isZero();
            return escaped[0].get(JAVA_FLOAT_UNALIGNED, 12);
        });
        assertThat(value).isEqualTo(3f);
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
        assertThatThrownBy(() -> escaped[0].get(JAVA_FLOAT_UNALIGNED, 0)).isInstanceOf(IllegalStateException.class);

        CPeer.Produced failing = PEER.make(PeerTensor.legacy());
        assertThatThrownBy(() -> ImportedTensor.apply(ManagedTensorKind.LEGACY, failing.pointer(), tensor -> {
            throw new UnsupportedOperationException("the action failed");
        })).hasMessage("the action failed");
        assertThat(PEER.deleterCalls(failing.id())).isEqualTo(1);

        CPeer.Produced selfClosing = PEER.make(PeerTensor.versioned());
        ImportedTensor.apply(ManagedTensorKind.VERSIONED, selfClosing.pointer(), tensor -> {
            tensor.close();
            return null;
        });
        assertThat(PEER.deleterCalls(selfClosing.id())).isEqualTo(1);
    }

    @Test
    void aTensorInACallersConfinedArenaIsUnusableAfterTheArenaCloses() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        MemorySegment segment;
        ImportedTensor tensor;
        try (Arena arena = Arena.ofConfined()) {
            tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer(), ImportLifetime.in(arena));
            segment = tensor.hostSegment();
        }
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
        assertThatThrownBy(() -> segment.get(JAVA_FLOAT_UNALIGNED, 0)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(tensor::hostSegment).isInstanceOf(IllegalStateException.class);
        tensor.close(); // still harmless
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void importingIntoAnotherThreadsConfinedArenaIsRefusedAndStillDeletes() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            CPeer.Produced produced = PEER.make(PeerTensor.versioned());
            ImportLifetime lifetime = ImportLifetime.in(arena);
            Object result = onAnotherThread(() -> ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer(), lifetime));
            assertThat(result).isInstanceOf(WrongThreadException.class);
            assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
        }
    }

    /** Issue 13 item 6: a tensor in the global arena would never see its deleter called. */
    @Test
    void theGlobalArenaIsRefusedAndTheDeleterStillRuns() {
        assertThatThrownBy(() -> ImportLifetime.in(Arena.global())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Arena.global()");

        // Refused before anything is taken: the export still owns its pointer.
        {
            Arena arena = Arena.ofShared(); // closed by the owner's release action
            ExportOwner owner = ExportOwner.of(arena, arena::close);
            ExportedTensor export = owner.export(TensorSpec.of(arena.allocate(8), DLDataType.FLOAT32, 2));
            owner.close();
            assertThatThrownBy(() -> export.importTensor(ImportLifetime.in(Arena.global()))).isInstanceOf(IllegalArgumentException.class);
            assertThat(export.isOwned()).isTrue();
            export.close();
            assertThat(owner.isReleased()).isTrue();
        }
    }

    @Test
    void virtualThreadsImportReadAndCloseTheirOwnTensors() throws Exception {
        int tasks = 2_000;
        List<Future<Integer>> results = new ArrayList<>();
        try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < tasks; i++) {
                boolean scoped = i % 2 == 0;
                results.add(executor.submit(() -> {
                    CPeer.Produced made = PEER.make(PeerTensor.versioned());
                    float read;
                    if (scoped) {
                        read = ImportedTensor.apply(ManagedTensorKind.VERSIONED, made.pointer(),
                                t -> t.hostSegment().get(JAVA_FLOAT_UNALIGNED, 20));
                    } else {
                        try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, made.pointer())) {
                            Thread.yield(); // may resume on another carrier: confinement is to the virtual thread
                            read = tensor.hostSegment().get(JAVA_FLOAT_UNALIGNED, 20);
                        }
                    }
                    assertThat(read).isEqualTo(5f);
                    return made.id();
                }));
            }
        }
        for (Future<Integer> result : results) {
            assertThat(PEER.deleterCalls(result.get())).isEqualTo(1);
        }
    }
}
