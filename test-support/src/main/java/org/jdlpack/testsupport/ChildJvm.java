package org.jdlpack.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a test's {@code main} class in a child JVM with this JVM's java, class path and native
 * access, for scenarios that end the process when they fail (a SIGSEGV, a fatal error of an
 * embedded runtime): a regression then fails the test that ran the child, not the build.
 *
 * <p>The child writes its verdict as lines starting with {@code RESULT }; the parent asserts on
 * {@link Outcome#exitCode()} and {@link Outcome#result()}. Crash reports and core dumps are off.
 */
public final class ChildJvm {

    private final List<String> jvmOptions = new ArrayList<>();
    private long timeoutSeconds = 300;
    private boolean nativeAccess = true;

    private ChildJvm() {
    }

    /** {@return a child with no extra options} */
    public static ChildJvm create() {
        return new ChildJvm();
    }

    /**
     * Adds JVM options (system properties, {@code -Xmx}, scheduler settings).
     *
     * @param options the options
     * @return this
     */
    public ChildJvm options(String... options) {
        jvmOptions.addAll(List.of(options));
        return this;
    }

    /**
     * Leaves out the {@code --enable-native-access=ALL-UNNAMED} every child gets otherwise, for a
     * test of what a user who forgot it sees (pass {@code --illegal-native-access=deny} or a
     * narrower {@code --enable-native-access} as {@link #options}).
     *
     * @return this
     */
    public ChildJvm withoutNativeAccess() {
        this.nativeAccess = false;
        return this;
    }

    /**
     * Sets how long the child may run before it is killed and the outcome says so.
     *
     * @param seconds the limit
     * @return this
     */
    public ChildJvm timeoutSeconds(long seconds) {
        this.timeoutSeconds = seconds;
        return this;
    }

    /**
     * Runs {@code mainClass} with {@code args} and waits for it.
     *
     * @param mainClass a class with a {@code main} method on this JVM's class path
     * @param args      its arguments
     * @return the exit code and everything it printed
     */
    public Outcome run(Class<?> mainClass, String... args) {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "-XX:-CreateCoredumpOnCrash", "-XX:ErrorFile=/dev/null"));
        if (nativeAccess) {
            command.add("--enable-native-access=ALL-UNNAMED");
        }
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("JDLPACK_BUILD_DIR", System.getenv().getOrDefault("JDLPACK_BUILD_DIR", "target"));
        try {
            Process process = builder.start();
            // Read on another thread, so that a child that hangs is still killed at the limit.
            StringBuilder output = new StringBuilder();
            Thread reader = Thread.ofPlatform().daemon().start(() -> {
                try {
                    output.append(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
                } catch (IOException e) {
                    output.append("(reading the child's output failed: ").append(e).append(')');
                }
            });
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
                reader.join();
                return new Outcome(-1, "TIMED OUT after " + timeoutSeconds + " s\n" + output);
            }
            reader.join();
            return new Outcome(process.exitValue(), output.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the child JVM", e);
        }
    }

    /**
     * What a child did.
     *
     * @param exitCode its exit status: not 0 for a crash (134 for an abort such as a fatal error of an embedded runtime, 1 when the JVM reports a SIGSEGV and exits), -1 if it was killed at the limit
     * @param output   its standard output and error, interleaved
     */
    public record Outcome(int exitCode, String output) {

        /** {@return the child's RESULT lines, joined by newlines; empty if it printed none} */
        public String result() {
            return String.join("\n", output.lines().filter(l -> l.startsWith("RESULT ")).toList());
        }
    }
}
