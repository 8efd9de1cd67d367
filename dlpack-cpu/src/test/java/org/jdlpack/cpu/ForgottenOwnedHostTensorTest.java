package org.jdlpack.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.testing.Collect;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An {@link OwnedHostTensor} that Java forgets is the safety net's: its memory is released after
 * garbage collection once no export holds it, the leak is counted and reported, and
 * {@link DLPackStats} shows it while it lives. Before the watch, 2,000 forgotten 1 MiB tensors kept
 * 2.1 GB after collection with every counter at zero. The segments kept here do not keep their
 * tensors (a segment holds its arena, not the tensor), so they show when the memory is gone.
 */
@ExtendWith(NothingLeftBehind.class)
class ForgottenOwnedHostTensorTest {

    private static final Duration COLLECTION = Duration.ofSeconds(30);
    private static final CPeer PEER = CPeer.get();

    @Test
    void forgottenTensorsAreReleasedCountedAndReported() throws InterruptedException {
        long leaksBefore = DLPackStats.leaksReported();
        List<MemorySegment> memory = forget(200);
        assertThat(memory).allMatch(segment -> segment.scope().isAlive());
        assertThat(DLPackStats.liveExportOwners()).as("forgotten but not yet collected").isGreaterThanOrEqualTo(200);
        assertThat(DLPackStats.snapshot().isQuiet()).isFalse();

        assertThat(Collect.until(() -> memory.stream().noneMatch(segment -> segment.scope().isAlive()), COLLECTION))
                .as("every forgotten tensor's memory freed after collection").isTrue();
        // The safety net frees the memory first and counts the leak right after: wait for the count too.
        assertThat(Collect.until(() -> DLPackStats.leaksReported() - leaksBefore >= 200, COLLECTION))
                .as("%d leaks reported, at least 200 expected", DLPackStats.leaksReported() - leaksBefore).isTrue();
        assertThat(DLPackStats.liveExportOwners()).isZero();
    }

    /** 1 MiB tensors, forgotten at once; {@return their data segments} */
    private static List<MemorySegment> forget(int count) {
        List<MemorySegment> memory = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            memory.add(OwnedHostTensor.allocate(DLDataType.FLOAT32, 512, 512).spec().data());
        }
        return memory;
    }

    @Test
    void aLiveExportKeepsAForgottenTensorUntilItsDeleterRuns() throws InterruptedException {
        MemorySegment[] data = new MemorySegment[1];
        MemorySegment exported = exportAndForget(data);
        collectUntilAForgottenCanaryIsReleased();
        long leaksBefore = DLPackStats.leaksReported(); // after the canary's
        assertThat(data[0].scope().isAlive()).as("the export keeps its owner").isTrue();
        assertThat(PEER.sumF32(exported, false)).isEqualTo(6.0); // C still reads the values
        PEER.deleteOnNewThread(exported, false);
        assertThat(Collect.until(() -> !data[0].scope().isAlive(), COLLECTION)).as("released after the deleter and a collection").isTrue();
        assertThat(Collect.until(() -> DLPackStats.leaksReported() - leaksBefore >= 1, COLLECTION))
                .as("the leak reported (counted right after the release)").isTrue();
    }

    private static MemorySegment exportAndForget(MemorySegment[] data) {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3);
        data[0] = tensor.spec().data();
        return tensor.export().consume(); // and the tensor is never closed
    }

    @Test
    void aForgottenRetainKeepsTheMemoryUntilCollectedThenIsReleasedAndReported() throws InterruptedException {
        MemorySegment[] data = new MemorySegment[1];
        ExportOwner.Retained held = retainAndClose(data);
        collectUntilAForgottenCanaryIsReleased();
        long leaksBefore = DLPackStats.leaksReported(); // after the canary's
        assertThat(data[0].scope().isAlive()).as("a reachable retain keeps its closed tensor's memory").isTrue();
        Reference.reachabilityFence(held); // reachable until here, whatever the JIT makes of the local
        held = null; // forgotten, never closed
        assertThat(Collect.until(() -> !data[0].scope().isAlive(), COLLECTION)).as("released once the retain is unreachable").isTrue();
        assertThat(Collect.until(() -> DLPackStats.leaksReported() - leaksBefore >= 1, COLLECTION)).as("the leak reported").isTrue();
    }

    private static ExportOwner.Retained retainAndClose(MemorySegment[] data) {
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3);
        data[0] = tensor.spec().data();
        ExportOwner.Retained held = tensor.retain();
        tensor.close();
        return held;
    }

    /** Child JVM: forgets a retain of a closed tensor and waits for its report (the first leak, so logged in full). */
    public static void main(String[] args) throws InterruptedException {
        MemorySegment[] data = new MemorySegment[1];
        retainAndClose(data); // the handle is dropped at once
        Collect.until(() -> DLPackStats.leaksReported() >= 1, COLLECTION);
        System.out.println("RESULT leaks=" + DLPackStats.leaksReported() + " alive=" + data[0].scope().isAlive());
    }

    @Test
    void aForgottenRetainIsReportedAsARetainNotAsAnUnclosedTensor() {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Dorg.jdlpack.leakTracking=true").timeoutSeconds(120)
                .run(ForgottenOwnedHostTensorTest.class);
        String output = outcome.output();
        assertThat(outcome.exitCode()).as(output).isZero();
        assertThat(output).as(output).contains("RESULT leaks=1 alive=false")
                .containsPattern("LEAK: a retain of OwnedHostTensor\\[.*\\] was never closed")
                .contains("ForgottenOwnedHostTensorTest.retainAndClose");
    }

    @Test
    void forgottenRowsGiveTheirTensorsReferenceBack() throws InterruptedException {
        OwnedHostTensor batch = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4}, 4);
        MemorySegment data = batch.spec().data();
        batch.rows(1, 3); // never closed
        batch.close();
        assertThat(Collect.until(() -> !data.scope().isAlive(), COLLECTION)).as("the rows' release gave the batch back").isTrue();
    }

    @Test
    void aViewKeepsItsTensor() throws InterruptedException {
        HostTensorView view = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3).host(); // the tensor itself is forgotten
        collectUntilAForgottenCanaryIsReleased();
        assertThat(view.getFloat(2)).isEqualTo(3f);
        MemorySegment data = view.segment();
        view = null; // now nothing holds the tensor
        assertThat(Collect.until(() -> !data.scope().isAlive(), COLLECTION)).isTrue();
    }

    /**
     * Collects until a tensor forgotten now, with no export, is released: the safety net has run
     * since, so whatever a test still finds alive was kept by what holds it, not missed.
     */
    private static void collectUntilAForgottenCanaryIsReleased() throws InterruptedException {
        long leaks = DLPackStats.leaksReported();
        MemorySegment canary = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4).spec().data();
        // Its leak is counted right after the release: wait for the count too, so that a test's own count starts after it.
        assertThat(Collect.until(() -> !canary.scope().isAlive() && DLPackStats.leaksReported() > leaks, COLLECTION))
                .as("a forgotten tensor released by the safety net").isTrue();
    }

    @Test
    void messagesNameTheTensorNotItsOwner() {
        OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3);
        tensor.close();
        assertThatThrownBy(tensor::close).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("OwnedHostTensor[").hasMessageContaining("was already closed").hasMessageNotContaining("ExportOwner");
        assertThatThrownBy(tensor::export).isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("OwnedHostTensor[").hasMessageContaining("was closed").hasMessageNotContaining("ExportOwner");
    }
}
