package org.jdlpack.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.zip.ZipFile;

import org.junit.jupiter.api.Test;

/**
 * The build's module-descriptor mechanism (see the root pom.xml): every library module carries a
 * module-info.class written at release 17, which the jar tool of a JDK 17 Maven can read, while
 * its code is release 22; the descriptors export what the API needs and qualify the rest. Under
 * {@code mvn verify} the library modules arrive here as the jars maven-jar-plugin built.
 */
class ModularJarsTest {

    private static final int RELEASE_17 = 61;
    private static final int RELEASE_22 = 66;

    /** One class from each library module, to find where the module was loaded from. */
    private static final Map<String, String> MODULES = new LinkedHashMap<>();

    static {
        MODULES.put("org.jdlpack.abi", "org/jdlpack/abi/DLDataType.class");
        MODULES.put("org.jdlpack.cpu", "org/jdlpack/cpu/HostTensorView.class");
        MODULES.put("org.jdlpack.cuda", "org/jdlpack/cuda/CudaRuntime.class");
        MODULES.put("org.jdlpack.opencl", "org/jdlpack/opencl/OpenCLBuffer.class");
        MODULES.put("org.jdlpack.onnxruntime", "org/jdlpack/onnxruntime/OrtBridge.class");
    }

    /** Third-party modules the library modules require, found the same way: ONNX Runtime's jar is an automatic module. */
    private static final Map<String, String> REQUIRED = Map.of("com.microsoft.onnxruntime", "ai/onnxruntime/OrtEnvironment.class");

    @Test
    void descriptorsAreRelease17AndCodeIsRelease22() throws IOException, URISyntaxException {
        for (Map.Entry<String, String> module : MODULES.entrySet()) {
            Path root = root(module.getValue());
            assertThat(majorVersion(read(root, "module-info.class"))).as("%s module-info.class in %s", module.getKey(), root)
                    .isEqualTo(RELEASE_17);
            assertThat(majorVersion(read(root, module.getValue()))).as("%s in %s", module.getValue(), root)
                    .isEqualTo(RELEASE_22);
        }
    }

    @Test
    void exportsAreQualifiedWhereOnlySiblingsNeedThem() throws IOException, URISyntaxException {
        Map<String, String> abiExports = exports(ModuleDescriptor.read(ByteBuffer.wrap(read(root(MODULES.get("org.jdlpack.abi")),
                "module-info.class"))));
        assertThat(abiExports).containsOnly(
                Map.entry("org.jdlpack.abi", "everyone"),
                Map.entry("org.jdlpack.abi.plumbing", "[org.jdlpack.arrow, org.jdlpack.cpu, org.jdlpack.cuda, org.jdlpack.djl, org.jdlpack.javacpp.pytorch, org.jdlpack.libtorch, "
                        + "org.jdlpack.onnxruntime, org.jdlpack.opencl, org.jdlpack.python, org.jdlpack.tensorflow]"));
        Map<String, String> cpuExports = exports(ModuleDescriptor.read(ByteBuffer.wrap(read(root(MODULES.get("org.jdlpack.cpu")),
                "module-info.class"))));
        assertThat(cpuExports).containsOnly(
                Map.entry("org.jdlpack.cpu", "everyone"),
                Map.entry("org.jdlpack.cpu.internal", "[org.jdlpack.cuda, org.jdlpack.onnxruntime, org.jdlpack.opencl]"));
        for (String name : List.of("org.jdlpack.cuda", "org.jdlpack.opencl", "org.jdlpack.onnxruntime")) {
            ModuleDescriptor descriptor = ModuleDescriptor.read(ByteBuffer.wrap(read(root(MODULES.get(name)), "module-info.class")));
            assertThat(descriptor.name()).isEqualTo(name);
            assertThat(exports(descriptor)).as(name).containsOnly(Map.entry(name, "everyone"));
        }
    }

    @Test
    void packagedJarsResolveAsOneModuleGraph() throws URISyntaxException {
        Path[] jars = new Path[MODULES.size() + REQUIRED.size()];
        int i = 0;
        for (String resource : MODULES.values()) {
            jars[i++] = root(resource);
        }
        for (String resource : REQUIRED.values()) {
            jars[i++] = root(resource);
        }
        assumeTrue(jars[0].toString().endsWith(".jar"), "the library modules are class directories here (mvn test); "
                + "run mvn verify to check the packaged jars");
        ModuleFinder finder = ModuleFinder.of(jars);
        Configuration graph = Configuration.resolve(finder, List.of(ModuleLayer.boot().configuration()), ModuleFinder.of(),
                MODULES.keySet());
        assertThat(graph.modules()).hasSize(MODULES.size() + REQUIRED.size());
        assertThat(finder.find("com.microsoft.onnxruntime").orElseThrow().descriptor().isAutomatic()).isTrue();
        for (String name : MODULES.keySet()) {
            ModuleDescriptor descriptor = finder.find(name).orElseThrow().descriptor();
            // The jar tool (of the JDK Maven runs on) records the project version in each descriptor.
            assertThat(descriptor.rawVersion()).as(name).isPresent();
        }
    }

    private static Map<String, String> exports(ModuleDescriptor descriptor) {
        return descriptor.exports().stream().collect(Collectors.toMap(ModuleDescriptor.Exports::source,
                e -> e.isQualified() ? e.targets().stream().sorted().toList().toString() : "everyone"));
    }

    /** The jar or class directory a class was loaded from. */
    private static Path root(String resource) throws URISyntaxException {
        String className = resource.replace('/', '.').substring(0, resource.length() - ".class".length());
        try {
            return Path.of(Class.forName(className, false, ModularJarsTest.class.getClassLoader())
                    .getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (ClassNotFoundException e) {
            throw new AssertionError(className + " is not on the test class path", e);
        }
    }

    private static byte[] read(Path root, String entry) throws IOException {
        if (Files.isDirectory(root)) {
            return Files.readAllBytes(root.resolve(entry));
        }
        try (ZipFile jar = new ZipFile(root.toFile())) {
            var zipEntry = jar.getEntry(entry);
            assertThat(zipEntry).as("%s in %s", entry, root).isNotNull();
            try (InputStream in = jar.getInputStream(zipEntry)) {
                return in.readAllBytes();
            }
        }
    }

    private static int majorVersion(byte[] classFile) {
        assertThat(ByteBuffer.wrap(classFile).getInt(0)).isEqualTo(0xCAFEBABE);
        return ByteBuffer.wrap(classFile).getShort(6) & 0xFFFF;
    }
}
