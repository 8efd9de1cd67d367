package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.ChildJvm;
import org.jdlpack.abi.testing.Collect;
import org.junit.jupiter.api.Test;

/**
 * A C-route tensor or session the user forgets is released by the safety net (the OrtValue, then
 * the hold on the memory; the OrtSession) and reported by its own name. Child JVM, leak tracking on.
 */
class ForgottenCApiObjectsTest {

    /** Child JVM: forgets a tensor and a session, waits for the reports, prints what is left. */
    public static void main(String[] args) throws Exception {
        OwnedHostTensor source = OwnedHostTensor.allocate(DLDataType.UINT16, 3);
        forgetATensor(source);
        forgetASession();
        source.close();
        Collect.until(() -> DLPackStats.leaksReported() >= 2 && OrtApi.LIVE_VALUES.get() == 0 && OrtApi.LIVE_SESSIONS.get() == 0
                && DLPackStats.liveExports() == 0, Duration.ofSeconds(60));
        System.out.println("RESULT values=" + OrtApi.LIVE_VALUES.get() + " sessions=" + OrtApi.LIVE_SESSIONS.get() + " exports="
                + DLPackStats.liveExports() + " leaks=" + DLPackStats.leaksReported());
    }

    private static void forgetATensor(OwnedHostTensor source) {
        OrtCApiSession.tensor(source); // never closed
    }

    private static void forgetASession() {
        OrtCApiSession.open(OnnxModelBytes.identity(4), 1); // never closed
    }

    @Test
    void forgottenTensorsAndSessionsAreReleasedAndReportedByTheirOwnNames() {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Dorg.jdlpack.leakTracking=true").timeoutSeconds(120)
                .run(ForgottenCApiObjectsTest.class);
        String output = outcome.output();
        assertThat(outcome.exitCode()).as(output).isZero();
        assertThat(output).containsPattern("LEAK: OrtCApiTensor\\[uint16, shape=\\[3\\].* from OwnedHostTensor\\[.*\\] was never closed")
                .contains("ForgottenCApiObjectsTest.forgetATensor");
        assertThat(output).contains("LEAK: OrtCApiSession[").contains("ForgottenCApiObjectsTest.forgetASession");
        assertThat(output).as("nothing named that the user never made").doesNotContain("LEAK: ExportedTensor")
                .doesNotContain("LEAK: OwnedHostTensor");
        assertThat(outcome.result()).as(output).isEqualTo("RESULT values=0 sessions=0 exports=0 leaks=2");
    }
}
