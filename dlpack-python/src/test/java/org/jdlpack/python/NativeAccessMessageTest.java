package org.jdlpack.python;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.jdlpack.python.access.NativeAccessMain;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.Test;

/**
 * A JVM that denies native access to dlpack-python gets a message naming the exact flag, on every
 * call: {@code ALL-UNNAMED} on the class path, {@code org.jdlpack.python} on the module path (the
 * flag users forget when they grant it to org.jdlpack.abi and org.jdlpack.cpu only). No Python is
 * needed: the check comes before anything else.
 */
class NativeAccessMessageTest {

    private static final String DENIED = "RESULT FAILED java.lang.IllegalCallerException: jdlpack calls native code through the FFM API";

    @Test
    void onTheClassPathEveryCallNamesAllUnnamed() {
        assumeTrue(Runtime.version().feature() >= 24, "--illegal-native-access exists from JDK 24 on");
        ChildJvm.Outcome outcome = ChildJvm.create().withoutNativeAccess().options("--illegal-native-access=deny")
                .timeoutSeconds(120).run(NativeAccessMain.class);
        assertThat(outcome.result()).as(outcome.output()).doesNotContain("STARTED")
                .doesNotContain("ExceptionInInitializerError").doesNotContain("NoClassDefFoundError");
        assertThat(outcome.result().lines().filter(l -> l.startsWith(DENIED) && l.contains("--enable-native-access=ALL-UNNAMED")))
                .as(outcome.output()).hasSize(2);
    }

    @Test
    void onTheModulePathWithoutTheFlagForOrgJdlpackPythonEveryCallNamesIt() {
        assumeTrue(Runtime.version().feature() >= 24, "--illegal-native-access exists from JDK 24 on");
        ChildJvm.Outcome outcome = ChildJvm.create().withoutNativeAccess()
                .options("--module-path", modulePath(), "--add-modules", "org.jdlpack.python",
                        "--enable-native-access=org.jdlpack.abi,org.jdlpack.cpu,ALL-UNNAMED", "--illegal-native-access=deny")
                .timeoutSeconds(120).run(NativeAccessMain.class);
        assertThat(outcome.result()).as(outcome.output()).contains("RESULT module module org.jdlpack.python")
                .doesNotContain("STARTED").doesNotContain("ExceptionInInitializerError").doesNotContain("NoClassDefFoundError");
        assertThat(outcome.result().lines().filter(l -> l.startsWith(DENIED) && l.contains("module org.jdlpack.python")
                && l.contains("--enable-native-access=org.jdlpack.python"))).as(outcome.output()).hasSize(2);
    }

    /** dlpack-abi, dlpack-cpu and this module's classes, from the test class path: jars or class folders, each a module. */
    private static String modulePath() {
        String own = Path.of(PythonRuntime.class.getProtectionDomain().getCodeSource().getLocation().getPath()).toString();
        List<String> entries = Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> e.contains("dlpack-abi") || e.contains("dlpack-cpu"))
                .filter(e -> !e.contains("test-classes") && !e.endsWith("-tests.jar")).toList(); // not dlpack-abi's test jar
        assertThat(entries).as("dlpack-abi and dlpack-cpu on the test class path").hasSize(2);
        return String.join(File.pathSeparator, entries) + File.pathSeparator + own;
    }
}
