package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * {@link PythonRuntime} from many virtual threads on several carriers: every kind of call, Java
 * tensors into NumPy and NumPy arrays into Java, deleters from both sides. Runs in a child JVM, so
 * that a Fatal Python error (an abort) fails this test instead of the build.
 *
 * <p>The system property {@code jdlpack.test.virtualThreadSeconds} sets how long (default 20).
 */
class VirtualThreadsTest {

    private static final int THREADS = 64;
    private static final int CARRIERS = 4;

    @Test
    void manyVirtualThreadsOnSeveralCarriersCallPythonWithoutCrashingOrLeaking() throws Exception {
        PythonPeers.numpy(); // skips (or fails in CI) without an embeddable NumPy
        long seconds = Long.getLong("jdlpack.test.virtualThreadSeconds", 20);
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process process = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED",
                "-Djdk.virtualThreadScheduler.parallelism=" + CARRIERS, "-cp", System.getProperty("java.class.path"),
                VirtualThreadsMain.class.getName(), Integer.toString(THREADS), Long.toString(seconds))
                .redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(seconds + 120, TimeUnit.SECONDS)).isTrue();
        System.out.println(out);
        assertThat(process.exitValue()).as("the child JVM's exit status (134: aborted)\n%s", out).isZero();

        Matcher summary = Pattern.compile("summary: threads=(\\d+) seconds=(\\d+) carriers=(\\d+) operations=(\\d+) failures=(\\d+) "
                + "liveExports=(\\d+) ownedManagedTensors=(\\d+) exportHeaderBytes=(\\d+) javaTensors=(\\d+) guardedDeleters=(\\d+)")
                .matcher(out);
        assertThat(summary.find()).as("the child's summary line\n%s", out).isTrue();
        assertThat(Integer.parseInt(summary.group(1))).as("virtual threads").isGreaterThanOrEqualTo(64);
        assertThat(Long.parseLong(summary.group(2))).as("seconds").isEqualTo(seconds);
        assertThat(Integer.parseInt(summary.group(3))).as("carrier threads the virtual threads ran on").isGreaterThanOrEqualTo(2);
        assertThat(Long.parseLong(summary.group(4))).as("operations").isPositive();
        assertThat(Long.parseLong(summary.group(5))).as("failed operations (first stack trace above)").isZero();
        assertThat(Long.parseLong(summary.group(6))).as("live exports").isZero();
        assertThat(Long.parseLong(summary.group(7))).as("owned managed tensors").isZero();
        assertThat(Long.parseLong(summary.group(8))).as("export header bytes").isZero();
        assertThat(Long.parseLong(summary.group(9))).as("Java tensor objects Python still holds").isZero();
        assertThat(Long.parseLong(summary.group(10))).as("Python producers' deleters not yet run").isZero();
    }
}
