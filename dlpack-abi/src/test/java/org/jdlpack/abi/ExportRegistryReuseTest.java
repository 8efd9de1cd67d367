package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import org.jdlpack.testsupport.CPeer;
import org.junit.jupiter.api.Test;

/**
 * The export registry uses its slots and headers again: a thread's next export takes the slot its
 * last deleter call freed, and a producer thread whose exports a consumer thread deletes takes the
 * consumer's freed slots instead of growing the table.
 */
class ExportRegistryReuseTest {

    private static final CPeer PEER = CPeer.get();
    private static final MemorySegment END = MemorySegment.ofAddress(1);

    @Test
    void aThreadsNextExportTakesTheSlotItsLastDeleterCallFreed() {
        try (Arena arena = Arena.ofShared()) {
            ExportOwner owner = ExportOwner.of(() -> { });
            TensorSpec spec = TensorSpec.of(arena.allocate(JAVA_FLOAT, 6), DLDataType.FLOAT32, 2, 3);
            MemorySegment first = owner.exportPointer(spec, ExportOptions.VERSIONED);
            int slot = ExportRegistry.slotOf(NativeMemory.readLong(first.address() + ManagedTensorKind.VERSIONED.managerCtxOffset()));
            PEER.delete(first, false);
            MemorySegment second = owner.exportPointer(spec, ExportOptions.VERSIONED);
            long id = NativeMemory.readLong(second.address() + ManagedTensorKind.VERSIONED.managerCtxOffset());
            assertThat(ExportRegistry.slotOf(id)).as("the slot, used again at once (another generation)").isEqualTo(slot);
            assertThat(second.address()).as("not the header, which waits in the quarantine").isNotEqualTo(first.address());
            PEER.delete(second, false);
            owner.close();
            assertThat(DLPackStats.liveExports()).isZero();
        }
    }

    @Test
    void aProducerFedByAConsumerThreadDoesNotGrowTheTable() throws Exception {
        int exports = 20_000;
        BlockingQueue<MemorySegment> handedOn = new ArrayBlockingQueue<>(64);
        Thread consumer = Thread.ofPlatform().start(() -> {
            try {
                for (MemorySegment p; (p = handedOn.take()) != END; ) {
                    PEER.delete(p, false);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        int before = ExportRegistry.slotsEverUsed();
        try (Arena arena = Arena.ofShared()) {
            ExportOwner owner = ExportOwner.of(() -> { });
            TensorSpec spec = TensorSpec.of(arena.allocate(JAVA_FLOAT, 6), DLDataType.FLOAT32, 2, 3);
            for (int i = 0; i < exports; i++) {
                handedOn.put(owner.exportPointer(spec, ExportOptions.VERSIONED));
            }
            handedOn.put(END);
            consumer.join(TimeUnit.MINUTES.toMillis(1));
            owner.close();
            assertThat(owner.isReleased()).isTrue();
        }
        assertThat(DLPackStats.liveExports()).isZero();
        // At most 65 in flight (the queue and the consumer's hand), taken from the consumer's
        // freed slots in whole stacks; fresh slots come 64 at a time.
        assertThat(ExportRegistry.slotsEverUsed() - before).as("slots added for %d exports", exports).isLessThan(1024);
    }
}
