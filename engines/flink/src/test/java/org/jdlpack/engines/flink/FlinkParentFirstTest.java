package org.jdlpack.engines.flink;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * jdlpack on the engine's own class path instead of in the job jar: {@link ParentFirstMain} in a
 * JVM whose class path holds jdlpack (Flink's lib/), under {@code --illegal-native-access=deny}.
 *
 * <p>It once failed under load (a job's loader not collected within 60 s): the JDK's
 * serialization caches held it, not jdlpack or Flink, and the wait now ends that hold as an engine
 * does (see {@code EngineChecks.awaitCollected}); {@code engines/flink/under-load.sh} runs this
 * test and {@link FlinkJobJarTest} 10 times under a CPU burner.
 */
class FlinkParentFirstTest {

    @Test
    void jdlpackInTheClustersClassPathLoadedParentFirst() throws Exception {
        Requirements.cCompiler();
        List<String> classPath = new ArrayList<>(JobJar.testClassPath());
        JobJar.jdlpack().forEach(p -> classPath.add(p.toString()));
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "--enable-native-access=ALL-UNNAMED", "--illegal-native-access=deny", "-Xmx1g", "-XX:SoftRefLRUPolicyMSPerMB=0",
                "-XX:-CreateCoredumpOnCrash", "-XX:ErrorFile=/dev/null"));
        for (String property : List.of("jdlpack.abi.jar", "jdlpack.cpu.jar", "jdlpack.testsupport.jar", "jdlpack.engines.job.sources")) {
            command.add("-D" + property + "=" + System.getProperty(property));
        }
        // Diagnosis: JDLPACK_ENGINES_CHILD_OPTIONS="-XX:... -XX:..." adds JVM options to the child.
        String extra = System.getenv().getOrDefault("JDLPACK_ENGINES_CHILD_OPTIONS", "").trim();
        if (!extra.isEmpty()) {
            command.addAll(List.of(extra.split("\\s+")));
        }
        if (System.getProperty("jdlpack.engines.heapDump") != null) {
            command.add("-Djdlpack.engines.heapDump=" + System.getProperty("jdlpack.engines.heapDump"));
        }
        String log = JobJar.property("jdlpack.engines.log").resolveSibling("flink-parent-first.log").toString();
        command.add("-Djdlpack.engines.log=" + log);
        command.addAll(List.of("-cp", String.join(File.pathSeparator, classPath), ParentFirstMain.class.getName()));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        StringBuilder output = new StringBuilder();
        Thread reader = Thread.ofPlatform().daemon().start(() -> {
            try {
                output.append(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                output.append("(reading the child's output failed: ").append(e).append(')');
            }
        });
        boolean finished = process.waitFor(300, TimeUnit.SECONDS);
        if (!finished) {
            process.destroyForcibly().waitFor();
        }
        reader.join();
        output.toString().lines().filter(l -> l.startsWith("ParentFirstMain ")).forEach(System.out::println);
        assertThat(finished).as("the child finished within 300 s:\n%s", output).isTrue();
        assertThat(output.toString()).as("the child's output (log: %s)", log).contains("RESULT ok");
        assertThat(process.exitValue()).isZero();
    }
}
