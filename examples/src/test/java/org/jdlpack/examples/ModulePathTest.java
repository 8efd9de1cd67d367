package org.jdlpack.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Test;

/**
 * The library jars on the module path, as a user runs them: a tiny module-info'd application
 * (src/test/modular) is compiled against dlpack-abi, dlpack-cpu, dlpack-python and dlpack-onnxruntime
 * (with ONNX Runtime's jar, an automatic module) as named modules
 * and run in a child JVM with {@code java --module-path ... --module ...}. Split packages, a
 * missing {@code requires} or export, or a restricted call outside the modules granted native
 * access would fail here.
 */
class ModulePathTest {

    private static final String MODULE = "org.jdlpack.examples.modular";

    @Test
    void theLibraryRunsAsNamedModules() throws IOException, InterruptedException {
        String modulePath = Stream.of("jdlpack.abi.jar", "jdlpack.cpu.jar", "jdlpack.python.jar",
                        "jdlpack.onnxruntime.jar", "onnxruntime.jar").map(ModulePathTest::required)
                .reduce((a, b) -> a + File.pathSeparator + b).orElseThrow();
        Path build = Path.of(System.getenv().getOrDefault("JDLPACK_BUILD_DIR", "target")).toAbsolutePath().resolve("modular");
        // Fresh every run: javac --module leaves up-to-date-looking class files alone, even when the
        // library they were compiled against changed.
        if (Files.exists(build)) {
            try (Stream<Path> old = Files.walk(build)) {
                old.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
        Path sources = Path.of("src/test/modular").toAbsolutePath();
        List<String> javac = new ArrayList<>(List.of("-d", build.resolve(MODULE).toString(), "--module-path", modulePath,
                "--module-source-path", sources.toString(), "--module", MODULE));
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        assertThat(compiler.run(null, null, null, javac.toArray(String[]::new))).as("javac of the modular application").isZero();
        // javac writes the module into a folder of its name under -d; the module path takes the parent.
        Path compiled = Files.isDirectory(build.resolve(MODULE).resolve(MODULE)) ? build.resolve(MODULE) : build;

        String java = ProcessHandle.current().info().command().orElseThrow();
        // ONNX Runtime loads its JNI library itself: on the module path it needs native access by its automatic module name.
        Process process = new ProcessBuilder(java,
                "--enable-native-access=org.jdlpack.abi,org.jdlpack.cpu,org.jdlpack.python,com.microsoft.onnxruntime",
                "--module-path", modulePath + File.pathSeparator + compiled, "--module", MODULE + "/" + MODULE + ".ModularMain",
                Path.of("src/main/resources/org/jdlpack/examples/server/scorer.onnx").toAbsolutePath().toString())
                .redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        System.out.println(out);
        assertThat(process.exitValue()).as(out).isZero();
        assertThat(out).contains("module: " + MODULE + ", abi: org.jdlpack.abi")
                .contains("round trip element 5: 6.0")
                .contains("onnxruntime logits: [-0.40, -0.20, 0.80, -0.75], zero-copy input: true")
                .contains("live exports: 0")
                .doesNotContain("WARNING");
        if (QuickStart.numPyOrNull() != null) {
            assertThat(out).contains("numpy sum: 21.0");
        }
    }

    private static String required(String property) {
        String value = System.getProperty(property);
        assertThat(value).as("system property " + property + " (set by the examples pom)").isNotBlank();
        return value;
    }
}
