package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import ai.onnxruntime.OrtEnvironment;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.testing.Collect;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.ChildJvm;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An {@link OrtInput} or {@link OrtOutput} the user forgets is released by the safety net and
 * reported by its own name, with where it was made: before, a forgotten input of an
 * {@code OwnedHostTensor} was reported as a leaked {@code ExportedTensor} (the bridge's hold,
 * which the user never made), and a forgotten allocated output as that and an
 * {@code OwnedHostTensor}. The child JVM runs with leak tracking on (read once at start-up).
 */
@ExtendWith(NothingLeftBehind.class)
class ForgottenOrtObjectsTest {

    /** Child JVM: forgets three inputs and an output, waits for the reports, prints what is left. */
    public static void main(String[] args) throws Exception {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        OwnedHostTensor source = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4, 5, 6, 7, 8}, 2, 4);
        forgetAnInput(OrtBridge.of(env), source);
        forgetAnOutput(OrtBridge.of(env));
        forgetASharedInputOfAnImport(OrtBridge.of(env).shared());
        forgetAConfinedInputOfAnImport(OrtBridge.of(env));
        source.close(); // the user closed the tensor; only the input was forgotten
        // Four objects, and the confined import the safety net cannot close from its thread, left to its own net.
        Collect.until(() -> DLPackStats.leaksReported() >= 5 && DLPackStats.liveExports() == 0
                && DLPackStats.ownedManagedTensors() == 0, Duration.ofSeconds(60));
        System.out.println("LEAKS " + DLPackStats.leaksReported());
        System.out.println("RESULT exports=" + DLPackStats.liveExports() + " owned=" + DLPackStats.ownedManagedTensors()
                + " owners=" + DLPackStats.liveExportOwners());
    }

    private static void forgetAnInput(OrtBridge ort, OwnedHostTensor source) throws Exception {
        ort.input(source); // never closed
    }

    private static void forgetAnOutput(OrtBridge ort) throws Exception {
        ort.allocateOutput(DLDataType.FLOAT32, 2, 3); // never closed
    }

    private static void forgetASharedInputOfAnImport(OrtBridge shared) throws Exception {
        shared.input(ImportedTensor.of(ManagedTensorKind.VERSIONED, CPeer.get().make(PeerTensor.versioned().shape(2, 4)).pointer()));
    }

    private static void forgetAConfinedInputOfAnImport(OrtBridge confined) throws Exception {
        confined.input(ImportedTensor.of(ManagedTensorKind.VERSIONED, CPeer.get().make(PeerTensor.versioned().shape(2, 4)).pointer()));
    }

    @Test
    void forgottenInputsAndOutputsAreReportedByTheirOwnNames() {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Dorg.jdlpack.leakTracking=true").timeoutSeconds(120)
                .run(ForgottenOrtObjectsTest.class);
        String output = outcome.output();
        assertThat(outcome.exitCode()).as(output).isZero();
        assertThat(output).as(output).contains("LEAKS 5");
        assertThat(output).containsPattern("LEAK: OrtInput\\[float32, shape=\\[2, 4\\].* from OwnedHostTensor\\[.*, zero-copy\\] was never closed")
                .contains("ForgottenOrtObjectsTest.forgetAnInput");
        assertThat(output).containsPattern("LEAK: OrtOutput\\[float32, shape=\\[2, 3\\].* in OwnedHostTensor\\[.*\\] was never closed")
                .contains("ForgottenOrtObjectsTest.forgetAnOutput");
        assertThat(output).containsPattern("LEAK: OrtInput\\[.* from the ImportedTensor of the DLManagedTensorVersioned at 0x[0-9a-f]+, "
                + "zero-copy\\] was never closed").contains("ForgottenOrtObjectsTest.forgetASharedInputOfAnImport");
        // A confined bridge's input: its OnnxTensor is closed, and the import moved into it, confined to the
        // thread that made it, is left to the import's own safety net, which reports it too.
        assertThat(output).contains("(partly: what it holds is confined to the thread that made it")
                .contains("ForgottenOrtObjectsTest.forgetAConfinedInputOfAnImport")
                .contains("LEAK: ImportedTensor(DLManagedTensorVersioned");
        assertThat(output).as("nothing named that the user never made").doesNotContain("LEAK: ExportedTensor")
                .doesNotContain("LEAK: OwnedHostTensor").doesNotContain("LEAK: ExportOwner");
        assertThat(outcome.result()).as(output).startsWith("RESULT exports=0 owned=0 owners=0");
    }

    @Test
    void aSecondCloseNamesTheTensorAndAnOutputsOwnTensorMayBeClosedFirst() throws Exception {
        OrtBridge ort = OrtBridge.of(OrtEnvironment.getEnvironment());
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3, 4, 5, 6, 7, 8}, 2, 4);
        try (OrtInput x = ort.input(tensor)) {
            tensor.close(); // the input holds the memory
            assertThatThrownBy(tensor::close).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("OwnedHostTensor[").hasMessageContaining("was already closed; close it once")
                    .hasMessageNotContaining("ExportOwner");
            assertThat(x.isOpen()).isTrue();
        }
        OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3);
        y.tensor().close(); // the output's own tensor, closed by its user first: the output's close must not throw
        y.close();
        assertThat(y.tensor().references()).isZero();
    }
}
