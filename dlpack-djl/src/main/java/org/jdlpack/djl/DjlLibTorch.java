package org.jdlpack.djl;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import ai.djl.engine.Engine;
import ai.djl.pytorch.jni.LibUtils;

/**
 * Finds the libtorch file DJL's PyTorch engine loaded: starts the engine the way a DJL program does
 * (once per process), asks DJL where its libtorch lies, and, on Linux, checks in
 * {@code /proc/self/maps} that this very file is mapped, so that looking symbols up in it opens
 * the same copy and never loads a second one. Refuses Windows, whose MSVC C++ ABI differs from the
 * Itanium ABI the mangled {@code at::fromDLPack} call assumes.
 */
final class DjlLibTorch {

    /** DJL's name of its PyTorch engine. */
    static final String ENGINE = "PyTorch";

    private DjlLibTorch() {
    }

    static LibTorch.Found find() {
        String os = System.getProperty("os.name", "");
        if (os.startsWith("Windows")) {
            return new LibTorch.Found(null, null, "libtorch on Windows is built with the MSVC C++ ABI, whose names and calling "
                    + "conventions for at::fromDLPack differ from the Itanium ABI this adapter calls; it is refused there. "
                    + "Use NDManager.create over a direct ByteBuffer and toByteBuffer(), or run on Linux or macOS");
        }
        String version;
        Path dir;
        try {
            Engine.getEngine(ENGINE); // loads libtorch and DJL's JNI library, once per process
            version = LibUtils.getVersion();
            dir = Path.of(LibUtils.getLibtorchPath());
        } catch (NoClassDefFoundError | UnsatisfiedLinkError | RuntimeException e) {
            return new LibTorch.Found(null, null, "DJL's PyTorch engine did not start (" + e + "): add ai.djl:api and "
                    + "ai.djl.pytorch:pytorch-engine 0.36.0, and for offline use ai.djl.pytorch:pytorch-native-cpu:"
                    + LibTorch.EXPECTED_VERSION + " (classifier of your platform) and ai.djl.pytorch:pytorch-jni:"
                    + LibTorch.EXPECTED_VERSION + "-0.36.0");
        }
        Path library = dir.resolve(os.startsWith("Mac") ? "libtorch_cpu.dylib" : "libtorch_cpu.so");
        if (!Files.exists(library)) {
            return new LibTorch.Found(null, version, "DJL loaded libtorch " + version + " from " + dir + ", but there is no "
                    + library.getFileName() + " in it");
        }
        String unmapped = notMapped(library);
        if (unmapped != null) {
            return new LibTorch.Found(library, version, unmapped);
        }
        return new LibTorch.Found(library, version, null);
    }

    /** {@return why {@code library} is not the mapped libtorch of this process, or null if it is (or the OS cannot tell)} */
    private static String notMapped(Path library) {
        List<String> maps;
        Path real;
        try {
            maps = Files.readAllLines(Path.of("/proc/self/maps"));
            real = library.toRealPath();
        } catch (IOException | RuntimeException e) {
            return null; // no /proc (macOS): DJL loaded this path itself, so the lookup finds that copy
        }
        String name = library.getFileName().toString();
        List<String> mapped = maps.stream().filter(line -> line.endsWith("/" + name))
                .map(line -> line.substring(line.indexOf('/'))).distinct().toList();
        if (mapped.contains(real.toString())) {
            return null;
        }
        return "DJL says its libtorch is " + real + ", but this process has " + (mapped.isEmpty() ? "no " + name + " mapped"
                : mapped + " mapped") + "; this adapter binds only the copy DJL loaded, never a second one";
    }
}
