package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Misuse on the export side that must neither free someone else's memory nor leak: stale second
 * deleter calls after the address and the slot were reused, registry generations at the wrap-around,
 * and confined memory. (Not under NothingLeftBehind, which forbids the bogus calls made here on
 * purpose; each test checks the counters itself.)
 */
class ExportMisuseTest {

    private static final CPeer PEER = CPeer.get();

    private Arena arena;
    private TensorSpec spec;
    private long bogusBefore;

    @BeforeEach
    void setUp() {
        arena = Arena.ofShared();
        MemorySegment data = arena.allocate(JAVA_FLOAT, 6);
        for (int i = 0; i < 6; i++) {
            data.setAtIndex(JAVA_FLOAT, i, i + 1);
        }
        spec = TensorSpec.of(data, DLDataType.FLOAT32, 2, 3);
        bogusBefore = DLPackStats.bogusDeleterCalls();
    }

    @AfterEach
    void tearDown() {
        arena.close();
        assertThat(DLPackStats.liveExports()).as("live exports after the test").isZero();
        assertThat(DLPackStats.exportHeaderBytes()).as("export header bytes after the test").isZero();
    }

    private static long managerCtx(MemorySegment versioned) {
        return NativeMemory.readLong(versioned.address() + ManagedTensorKind.VERSIONED.managerCtxOffset());
    }

    @Test
    void aStaleSecondDeleterCallDoesNotFreeTheNextExport() {
        ExportOwner owner = ExportOwner.of(() -> { });
        MemorySegment first = owner.exportPointer(spec, ExportOptions.VERSIONED);
        PEER.delete(first, false); // the correct call
        // Without a quarantine, malloc hands the same address to the next export, and the registry
        // the same slot: the stale call below would then read the new export's id and free it.
        MemorySegment second = owner.exportPointer(spec, ExportOptions.VERSIONED);
        PEER.delete(first, false); // a buggy second call with the old pointer

        assertThat(DLPackStats.liveExports()).as("the second export is still live").isEqualTo(1);
        assertThat(DLPackStats.bogusDeleterCalls()).as("the stale call is refused and counted").isEqualTo(bogusBefore + 1);
        assertThat(PEER.sumF32(second, false)).as("the second export's header is intact").isEqualTo(21.0);
        PEER.delete(second, false);
        assertThat(DLPackStats.bogusDeleterCalls()).isEqualTo(bogusBefore + 1);
        owner.close();
        assertThat(owner.isReleased()).isTrue();
    }

    @Test
    void aStaleCallAfterManyLaterExportsIsStillRefused() {
        ExportOwner owner = ExportOwner.of(() -> { });
        MemorySegment stale = owner.exportPointer(spec, ExportOptions.VERSIONED);
        PEER.delete(stale, false);
        int later = ExportRegistry.QUARANTINE / 2;
        for (int i = 0; i < later; i++) {
            MemorySegment p = owner.exportPointer(spec, ExportOptions.VERSIONED);
            assertThat(p.address()).as("export %d reuses the quarantined address", i).isNotEqualTo(stale.address());
            PEER.delete(p, false);
        }
        MemorySegment live = owner.exportPointer(spec, ExportOptions.VERSIONED);
        PEER.delete(stale, false);
        assertThat(DLPackStats.liveExports()).isEqualTo(1);
        assertThat(DLPackStats.bogusDeleterCalls()).isEqualTo(bogusBefore + 1);
        PEER.delete(live, false);
        owner.close();
    }

    @Test
    void theGenerationWrapsToOneAndTheCorrectDeleterCallIsStillAccepted() {
        ExportOwner owner = ExportOwner.of(() -> { });
        MemorySegment p = owner.exportPointer(spec, ExportOptions.VERSIONED);
        int slot = ExportRegistry.slotOf(managerCtx(p));
        PEER.delete(p, false);
        // Instead of 2^35 reuses: the slot's next export gets the last generation an id can carry.
        ExportRegistry.setFreeSlotGeneration(slot, ExportRegistry.MAX_GENERATION - 1);

        MemorySegment top = exportOnSlot(owner, slot);
        long topId = managerCtx(top);
        assertThat(ExportRegistry.generationOf(topId)).isEqualTo(ExportRegistry.MAX_GENERATION);
        assertThat(topId).isPositive();
        PEER.delete(top, false);
        assertThat(DLPackStats.liveExports()).as("the export with the last generation is freed").isZero();

        MemorySegment wrapped = exportOnSlot(owner, slot);
        long wrappedId = managerCtx(wrapped);
        assertThat(ExportRegistry.generationOf(wrappedId)).as("wrapped, skipping 0").isEqualTo(1);
        assertThat(wrappedId).isPositive();
        PEER.delete(wrapped, false);
        assertThat(DLPackStats.liveExports()).as("the wrapped export is freed").isZero();
        assertThat(DLPackStats.bogusDeleterCalls()).as("no correct call was refused").isEqualTo(bogusBefore);
        owner.close();
        assertThat(owner.isReleased()).isTrue();
    }

    /**
     * Exports until an export lands on {@code slot}, deleting each other export at once: a stripe
     * gives its last freed slot back first (unless another thread of the same stripe, the safety
     * net say, freed one since).
     */
    private MemorySegment exportOnSlot(ExportOwner owner, int slot) {
        for (int attempt = 0; attempt < 64; attempt++) {
            MemorySegment p = owner.exportPointer(spec, ExportOptions.VERSIONED);
            if (ExportRegistry.slotOf(managerCtx(p)) == slot) {
                return p;
            }
            PEER.delete(p, false);
        }
        throw new AssertionError("slot " + slot + " was not reused within 64 exports on this thread");
    }

    @Test
    void confinedMemoryIsRefusedAtExportWithAMessageSayingWhatToUse() {
        ExportOwner owner = ExportOwner.of(() -> { });
        try (Arena confined = Arena.ofConfined()) {
            TensorSpec confinedSpec = TensorSpec.of(confined.allocate(24), DLDataType.INT32, 6);
            assertThatThrownBy(() -> owner.export(confinedSpec))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("confined arena")
                    .hasMessageContaining("shared or global arena");
            assertThatThrownBy(() -> owner.exportPointer(confinedSpec, ExportOptions.LEGACY))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("confined arena");
        }
        assertThat(owner.references()).as("a refused export holds no reference").isEqualTo(1);
        assertThat(DLPackStats.liveExports()).isZero();
        // Global and automatic memory are not confined: they export.
        MemorySegment auto = owner.exportPointer(TensorSpec.of(Arena.ofAuto().allocate(24), DLDataType.INT32, 6),
                ExportOptions.VERSIONED);
        PEER.delete(auto, false);
        owner.close();
        assertThat(owner.isReleased()).isTrue();
    }
}
