package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * A JVM started without --enable-native-access gets a message naming the exact flag: a warning by
 * default, the reason for the failure under --illegal-native-access=deny.
 */
class NativeAccessMessageTest {

    /** Run in a child JVM: the first export makes jdlpack's first restricted calls. */
    public static void main(String[] args) {
        // Twice: a refusal in a static initializer would be ExceptionInInitializerError the first
        // time and a message-less NoClassDefFoundError the second.
        for (int attempt = 0; attempt < 2; attempt++) {
            try (Arena arena = Arena.ofShared()) {
                ExportOwner owner = ExportOwner.of(() -> { });
                owner.export(TensorSpec.of(arena.allocate(4), DLDataType.FLOAT32, 1)).close();
                owner.close();
                System.out.println("EXPORTED");
            } catch (Throwable t) {
                System.out.println("FAILED " + t);
            }
        }
        if (args.length > 0 && args[0].equals("import")) {
            // Only where access is denied: allowed, the import would read address 4096 and crash.
            try {
                ImportedTensor.of(ManagedTensorKind.VERSIONED, java.lang.foreign.MemorySegment.ofAddress(4096)).close();
            } catch (Throwable t) {
                System.out.println("FAILED " + t);
            }
        }
    }

    private static String runChild(String... jvmOptionsThenArguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElseThrow());
        List<String> words = List.of(jvmOptionsThenArguments);
        command.addAll(words.stream().filter(w -> w.startsWith("-")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), NativeAccessMessageTest.class.getName()));
        command.addAll(words.stream().filter(w -> !w.startsWith("-")).toList());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return output;
    }

    @Test
    void withoutTheFlagTheWarningNamesIt() throws Exception {
        String output = runChild();
        assertThat(output).contains("EXPORTED");
        assertThat(output).contains("jdlpack calls native code through the FFM API")
                .contains("run java with --enable-native-access=ALL-UNNAMED");
        // Once per module, as the JDK's own warning: not once per library, stub kind and class.
        assertThat(output.lines().filter(l -> l.contains("jdlpack calls native code"))).as(output).hasSize(1);
    }

    @Test
    void whenNativeAccessIsDeniedTheFailureNamesTheFlag() throws Exception {
        assumeTrue(Runtime.version().feature() >= 24, "--illegal-native-access exists from JDK 24 on");
        String output = runChild("--illegal-native-access=deny", "import");
        assertThat(output).doesNotContain("EXPORTED").doesNotContain("ExceptionInInitializerError")
                .doesNotContain("NoClassDefFoundError");
        assertThat(output.lines().filter(l -> l.startsWith("FAILED java.lang.IllegalCallerException: jdlpack calls native code")
                && l.contains("--enable-native-access=ALL-UNNAMED"))).as(output).hasSize(3);
        // The failures say it; no warning says it a second time before them, and the import's
        // deleter, which could not be called either, only names the flag.
        assertThat(output.lines().filter(l -> l.contains("jdlpack calls native code"))).as(output).hasSize(3);
        assertThat(output).contains("the deleter of DLManagedTensorVersioned at 0x1000 was not called: native access is "
                + "denied; run java with --enable-native-access=ALL-UNNAMED");
    }

    @Test
    void withTheFlagThereIsNoWarning() throws Exception {
        String output = runChild("--enable-native-access=ALL-UNNAMED");
        assertThat(output).contains("EXPORTED").doesNotContain("WARNING");
    }
}
