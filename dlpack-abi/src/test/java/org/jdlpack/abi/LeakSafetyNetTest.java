package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.function.BooleanSupplier;

import org.jdlpack.abi.testing.Collect;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Forgotten tensors and handles are released by the safety net after GC, and reported once. */
@ExtendWith(NothingLeftBehind.class)
class LeakSafetyNetTest {

    private static final CPeer PEER = CPeer.get();

    /** Collects garbage until the condition holds; the safety net runs on its own thread. */
    private static void gcUntil(BooleanSupplier condition) throws InterruptedException {
        assertThat(Collect.until(condition, Duration.ofSeconds(30))).as("the safety net did not run within 30 s").isTrue();
    }

    private static int importAndForget(ImportLifetime lifetime) {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer(), lifetime);
        assertThat(tensor.hostSegment().byteSize()).isEqualTo(24);
        return produced.id();
    }

    /** Both lifetimes with an arena of their own; a caller's arena is the caller's to close. */
    @ParameterizedTest
    @ValueSource(strings = {"CONFINED", "SHARED"})
    void aForgottenImportedTensorIsReleasedAndReportedOnce(String mode) throws InterruptedException {
        long leaksBefore = DLPackStats.leaksReported();
        int id = importAndForget(mode.equals("CONFINED") ? ImportLifetime.CONFINED : ImportLifetime.SHARED);
        gcUntil(() -> PEER.deleterCalls(id) == 1 && DLPackStats.leaksReported() > leaksBefore);
        assertThat(DLPackStats.leaksReported()).isEqualTo(leaksBefore + 1);
        // More collections neither call the deleter again nor report again.
        System.gc();
        Thread.sleep(50); // a window for a wrong second safety-net action to show up
        assertThat(PEER.deleterCalls(id)).isEqualTo(1);
        assertThat(DLPackStats.leaksReported()).isEqualTo(leaksBefore + 1);
    }

    @Test
    void aForgottenHandleIsReleasedAndReportedOnce() throws InterruptedException {
        long leaksBefore = DLPackStats.leaksReported();
        CPeer.Produced produced = PEER.make(PeerTensor.legacy());
        PeerHandles.holding(ManagedTensorKind.LEGACY, produced.pointer());
        gcUntil(() -> PEER.deleterCalls(produced.id()) == 1 && DLPackStats.leaksReported() > leaksBefore);
        assertThat(DLPackStats.leaksReported()).isEqualTo(leaksBefore + 1);
    }

    @Test
    void aForgottenExportHandleReleasesItsOwner() throws InterruptedException {
        long leaksBefore = DLPackStats.leaksReported();
        try (Arena arena = Arena.ofShared()) {
            ExportOwner owner = ExportOwner.of(() -> { });
            owner.export(TensorSpec.of(arena.allocate(8), DLDataType.FLOAT32, 2));
            owner.close();
            gcUntil(() -> owner.isReleased() && DLPackStats.leaksReported() > leaksBefore);
        }
        assertThat(DLPackStats.leaksReported()).isEqualTo(leaksBefore + 1);
    }

    @Test
    void aClosedTensorIsNotReportedWhenCollected() throws InterruptedException {
        long leaksBefore = DLPackStats.leaksReported();
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer()).close();
        System.gc();
        Thread.sleep(50); // a window for a wrong safety-net report to show up
        assertThat(DLPackStats.leaksReported()).isEqualTo(leaksBefore);
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void aSegmentThatOutlivesItsForgottenTensorKeepsTheMemoryAlive() throws InterruptedException {
        long leaksBefore = DLPackStats.leaksReported();
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        java.lang.foreign.MemorySegment segment = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer()).hostSegment();
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(20); // a window for a wrong safety-net action to run
        }
        assertThat(PEER.deleterCalls(produced.id())).as("released while a segment still points at the memory").isZero();
        assertThat(segment.get(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED, 20)).isEqualTo(5f);
        segment = null;
        gcUntil(() -> PEER.deleterCalls(produced.id()) == 1 && DLPackStats.leaksReported() > leaksBefore);
    }

    @Test
    void aTensorInAnAutomaticArenaIsReleasedByTheCollectorWithoutALeakReport() throws InterruptedException {
        long leaksBefore = DLPackStats.leaksReported();
        CPeer.Produced produced = PEER.make(PeerTensor.legacy());
        ImportedTensor.of(ManagedTensorKind.LEGACY, produced.pointer(), ImportLifetime.in(Arena.ofAuto())).hostSegment();
        gcUntil(() -> PEER.deleterCalls(produced.id()) == 1);
        assertThat(DLPackStats.leaksReported()).isEqualTo(leaksBefore);
    }
}
