package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** Releases due after the interpreter was finalized leak and are counted; nothing crashes. */
class FinalizationTest {

    @Test
    void deletersAndReferencesDueAfterFinalizationLeakAndAreCounted() throws Exception {
        PythonPeers.numpy(); // skips (or fails in CI) without an embeddable NumPy
        String java = ProcessHandle.current().info().command().orElseThrow();
        // In a child JVM: finalizing the interpreter here would end every other test's Python.
        Process process = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                FinalizedInterpreterMain.class.getName()).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        System.out.println(out);
        assertThat(process.exitValue()).as(out).isZero();
        assertThat(out).contains("finalized rc=0")
                .contains("leaked after finalization: 2")
                .contains("owned managed tensors: 0")
                .contains("exec after finalization: the embedded Python interpreter has been finalized");
    }
}
