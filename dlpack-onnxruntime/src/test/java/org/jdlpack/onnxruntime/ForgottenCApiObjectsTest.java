package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.Set;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.ChildJvm;
import org.jdlpack.abi.testing.Collect;
import org.junit.jupiter.api.Test;

/**
 * A C-route tensor, session, binding or allocated output the user forgets is released by the
 * safety net (the OrtValue, then the hold on the memory; the OrtSession; the OrtIoBinding, then
 * its holds; ONNX Runtime's own OrtValue) and reported by its own name. Child JVM, leak tracking on.
 */
class ForgottenCApiObjectsTest {

    /** Child JVM: forgets a tensor, a session, a binding and an allocated output, waits for the reports, prints what is left. */
    public static void main(String[] args) throws Exception {
        OwnedHostTensor source = OwnedHostTensor.allocate(DLDataType.UINT16, 3);
        forgetATensor(source);
        forgetASession();
        forgetABinding();
        forgetAnAllocatedOutput();
        source.close();
        Collect.until(() -> DLPackStats.leaksReported() >= 4 && OrtApi.LIVE_VALUES.get() == 0 && OrtApi.LIVE_SESSIONS.get() == 0
                && OrtApi.LIVE_IO_BINDINGS.get() == 0 && DLPackStats.liveExports() == 0 && DLPackStats.liveExportOwners() == 0,
                Duration.ofSeconds(60));
        System.out.println("RESULT values=" + OrtApi.LIVE_VALUES.get() + " sessions=" + OrtApi.LIVE_SESSIONS.get() + " bindings="
                + OrtApi.LIVE_IO_BINDINGS.get() + " exports=" + DLPackStats.liveExports() + " owners="
                + DLPackStats.liveExportOwners() + " leaks=" + DLPackStats.leaksReported());
    }

    private static void forgetATensor(OwnedHostTensor source) {
        OrtCApiSession.tensor(source); // never closed
    }

    private static void forgetASession() {
        OrtCApiSession.open(OnnxModelBytes.identity(4), 1); // never closed
    }

    /** The binding is forgotten; its session and tensors are closed, and live on until the binding's release. */
    private static void forgetABinding() {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(1), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             OrtCApiTensor yt = OrtCApiSession.tensor(x)) {
            session.bind(Map.of("x", xt), Map.of("y", yt)).run(); // never closed
        }
    }

    /** The AllocatedOutputs and its tensor over ONNX Runtime's value are forgotten. */
    private static void forgetAnAllocatedOutput() {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.nonZero(1), 1);
             OwnedHostTensor x = OwnedHostTensor.copyOf(new float[] {0, 3, 0, 5}, 4);
             OrtCApiTensor xt = OrtCApiSession.tensor(x)) {
            session.run(Map.of("x", xt), Map.of(), Set.of("y")); // never closed
        }
    }

    @Test
    void forgottenTensorsSessionsBindingsAndAllocatedOutputsAreReleasedAndReportedByTheirOwnNames() {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Dorg.jdlpack.leakTracking=true").timeoutSeconds(120)
                .run(ForgottenCApiObjectsTest.class);
        String output = outcome.output();
        assertThat(outcome.exitCode()).as(output).isZero();
        assertThat(output).containsPattern("LEAK: OrtCApiTensor\\[uint16, shape=\\[3\\].* from OwnedHostTensor\\[.*\\] was never closed")
                .contains("ForgottenCApiObjectsTest.forgetATensor");
        assertThat(output).contains("LEAK: OrtCApiSession[").contains("ForgottenCApiObjectsTest.forgetASession");
        assertThat(output).containsPattern("LEAK: OrtCApiBinding\\[inputs \\[x\\], outputs \\[y\\] of OrtCApiSession\\[81 bytes of model\\]\\] was never closed")
                .contains("ForgottenCApiObjectsTest.forgetABinding");
        assertThat(output).containsPattern("LEAK: OwnedHostTensor\\[.*int64, shape=\\[1, 2\\].*\\] was never closed")
                .contains("ForgottenCApiObjectsTest.forgetAnAllocatedOutput");
        assertThat(output).as("nothing named that the user never made").doesNotContain("LEAK: ExportedTensor")
                .doesNotContain("LEAK: OrtCApiTensor[float32").doesNotContain("LEAK: a retain");
        assertThat(output.lines().filter(line -> line.contains("LEAK: OwnedHostTensor")).count())
                .as("the allocated output is the one OwnedHostTensor reported: the user got it").isEqualTo(1);
        assertThat(outcome.result()).as(output)
                .isEqualTo("RESULT values=0 sessions=0 bindings=0 exports=0 owners=0 leaks=4");
    }
}
