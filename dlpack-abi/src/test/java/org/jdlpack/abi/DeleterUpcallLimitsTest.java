package org.jdlpack.abi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.NativeBuild;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Deleter upcalls where the JVM has the least room: native threads with small stacks, a JVM whose
 * heap is exhausted, and a C atexit handler after the JVM has shut down. Each case runs in a child
 * JVM, because the cases the JVM cannot survive end the process.
 */
class DeleterUpcallLimitsTest {

    /**
     * Child JVM: {@code stack BYTES}, {@code heap}, {@code heap-native-thread} or {@code atexit}.
     * Prints one RESULT line.
     */
    @SuppressWarnings("restricted")
    public static void main(String[] args) throws Throwable {
        SymbolLookup limits = SymbolLookup.libraryLookup(NativeBuild.compile("libupcalllimits.so", "-shared", "-fPIC",
                "upcall_limits.c"), Arena.global());
        Linker linker = Linker.nativeLinker();
        AtomicInteger released = new AtomicInteger();
        Arena arena = Arena.ofShared();
        ExportOwner owner = ExportOwner.of(arena, released::incrementAndGet);
        MemorySegment pointer = owner.export(TensorSpec.of(arena.allocate(64), DLDataType.FLOAT32, 4, 4)).consume();
        owner.close();
        switch (args[0]) {
            case "stack" -> {
                MethodHandle onStack = linker.downcallHandle(limits.find("limits_delete_on_stack").orElseThrow(),
                        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG));
                int rc = (int) onStack.invokeExact(pointer, 0, Long.parseLong(args[1]));
                System.out.println("RESULT rc=" + rc + " " + stats(released));
            }
            case "heap", "heap-native-thread" -> {
                // A process that has exported before: the classes on the deleter's path are loaded.
                CPeer peer = CPeer.get();
                ExportOwner warm = ExportOwner.of(() -> { });
                peer.delete(warm.export(TensorSpec.of(arena.allocate(4), DLDataType.FLOAT32, 1)).consume(), false);
                peer.deleteOnNewThread(warm.export(TensorSpec.of(arena.allocate(4), DLDataType.FLOAT32, 1)).consume(), false);
                warm.close();
                boolean fromJavaThread = args[0].equals("heap");
                List<long[]> hog = new ArrayList<>();
                try {
                    while (true) {
                        hog.add(new long[64 * 1024]);
                    }
                } catch (OutOfMemoryError full) {
                    // The heap is full now; the next allocation anywhere throws OutOfMemoryError.
                }
                if (fromJavaThread) {
                    // From a Java thread: downcall into C, which calls the deleter upcall on this thread.
                    peer.delete(pointer, false);
                } else {
                    // From a pthread the JVM has never seen: the upcall must attach it first.
                    peer.deleteOnNewThread(pointer, false);
                }
                int afterJavaThread = released.get();
                hog.clear();
                System.out.println("RESULT " + stats(released) + " releasedWhileFull=" + afterJavaThread);
            }
            case "atexit" -> {
                MethodHandle atExit = linker.downcallHandle(limits.find("limits_delete_at_exit").orElseThrow(),
                        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
                int rc = (int) atExit.invokeExact(pointer, 0);
                System.out.println("RESULT registered=" + rc);
                System.out.flush();
            }
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    private static String stats(AtomicInteger released) {
        return "released=" + released.get() + " live=" + DLPackStats.liveExports() + " failures=" + DLPackStats.deleterFailures()
                + " bogus=" + DLPackStats.bogusDeleterCalls();
    }

    private record Outcome(int exitCode, String output) {
        String result() {
            return output.lines().filter(l -> l.startsWith("RESULT ")).findFirst().orElse("");
        }
    }

    private static Outcome child(List<String> jvmOptions, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElseThrow(),
                "--enable-native-access=ALL-UNNAMED", "-XX:-CreateCoredumpOnCrash", "-XX:ErrorFile=/dev/null"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), DeleterUpcallLimitsTest.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("JDLPACK_BUILD_DIR", System.getenv().getOrDefault("JDLPACK_BUILD_DIR", "target"));
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Outcome(process.waitFor(), output);
    }

    @ParameterizedTest(name = "stack of {0} KiB")
    @ValueSource(ints = {128, 256, 1024})
    void aDeleterOnANativeThreadWithTheDocumentedMinimumStackOrMoreFreesTheExport(int kib) throws Exception {
        Outcome outcome = child(List.of(), "stack", Long.toString(kib * 1024L));
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output()).isEqualTo("RESULT rc=0 released=1 live=0 failures=0 bogus=0");
    }

    /**
     * Sweeps the stack sizes where the JVM is about to run out (JDK 25, x86-64: it aborts at 106
     * KiB or less, inside its own upcall entry, and a deleter at 108 KiB runs out inside jdlpack).
     * At every size either the child exits normally with consistent counters (freed, or a failure
     * counted and the export left live), or it aborts with no jdlpack frame in sight: the JVM failed
     * before our code ran. Before the catch path stopped building message strings, a deleter at 108
     * KiB threw StackOverflowError from that catch block out of the upcall and ended the JVM.
     */
    @Test
    void aDeleterThatRunsOutOfStackNeverEndsTheJvmItself() throws Exception {
        int survived = 0;
        for (int kib = 104; kib <= 114; kib++) {
            Outcome outcome = child(List.of(), "stack", Long.toString(kib * 1024L));
            if (outcome.exitCode() == 0) {
                survived++;
                assertThat(outcome.result()).as("%d KiB: %s", kib, outcome.output()).isIn(
                        "RESULT rc=0 released=1 live=0 failures=0 bogus=0",
                        "RESULT rc=0 released=0 live=1 failures=1 bogus=0");
            } else {
                assertThat(outcome.output()).as("%d KiB: the JVM ended inside jdlpack", kib).doesNotContain("org.jdlpack");
            }
        }
        assertThat(survived).as("sizes at which the deleter ran").isPositive();
    }

    /**
     * From a Java thread. From a native thread the JVM has never seen, the JVM must allocate a
     * Thread object to attach it, and with the heap exhausted it aborts in its upcall entry
     * ("Could not attach thread for upcall"), before any library code runs: documented, not tested.
     */
    @Test
    void aDeleterWithTheHeapExhaustedFreesTheExport() throws Exception {
        Outcome outcome = child(List.of("-Xmx48m"), "heap");
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output()).isEqualTo("RESULT released=1 live=0 failures=0 bogus=0 releasedWhileFull=1");
    }

    @Test
    void aDeleterCalledFromACAtexitHandlerAfterTheJvmIsGoneFindsNullAndTheProcessExitsCleanly() throws Exception {
        // Without the shutdown hook that sets live exports' deleters to NULL, the upcall from the
        // atexit handler aborts the process in the JVM's upcall entry ("Could not attach thread").
        Outcome outcome = child(List.of(), "atexit");
        assertThat(outcome.result()).as(outcome.output()).isEqualTo("RESULT registered=0");
        assertThat(outcome.output()).doesNotContain("fatal error");
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
    }
}
