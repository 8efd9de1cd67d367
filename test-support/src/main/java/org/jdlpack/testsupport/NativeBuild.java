package org.jdlpack.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Compiles the C test peer's sources with the system C compiler ({@code $CC}, default gcc) into a
 * build directory: {@code $JDLPACK_BUILD_DIR/cpeer} (Surefire sets it to the module's target
 * folder), else {@code target/cpeer} under the working directory.
 */
public final class NativeBuild {

    private static final String[] SOURCES = {"dlpack.h", "peer_deleter.h", "peer.c", "abi_probe.c", "upcall_limits.c", "exchange_peer.c"};

    private NativeBuild() {
    }

    /** The folder the peer is built in; created on first use, with the sources copied into it. */
    public static synchronized Path directory() {
        String base = System.getenv("JDLPACK_BUILD_DIR");
        Path dir = (base != null ? Path.of(base) : Path.of("target")).toAbsolutePath().resolve("cpeer");
        try {
            Files.createDirectories(dir);
            for (String name : SOURCES) {
                try (InputStream in = NativeBuild.class.getResourceAsStream("c/" + name)) {
                    if (in == null) {
                        throw new IllegalStateException("C peer source " + name + " is not on the class path");
                    }
                    Files.copy(in, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot prepare " + dir, e);
        }
        return dir;
    }

    /**
     * Runs the C compiler; fails with its output when it fails. When {@code $JDLPACK_PREBUILT}
     * names a folder that already holds {@code output} (the GPU check bundle ships the peer built
     * in advance, for machines without a compiler), that file is used instead.
     */
    public static Path compile(String output, String... arguments) {
        String prebuilt = System.getenv("JDLPACK_PREBUILT");
        if (prebuilt != null && Files.isRegularFile(Path.of(prebuilt, output))) {
            return Path.of(prebuilt, output).toAbsolutePath();
        }
        Path dir = directory();
        Path result = dir.resolve(output);
        List<String> command = new ArrayList<>();
        command.add(System.getenv().getOrDefault("CC", "gcc"));
        command.addAll(List.of("-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", result.toString()));
        command.addAll(List.of(arguments));
        run(dir, command);
        return result;
    }

    /** Whether the C compiler ({@code $CC}, default gcc) can be started. */
    public static boolean compilerAvailable() {
        try {
            Process process = new ProcessBuilder(System.getenv().getOrDefault("CC", "gcc"), "--version").redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            return process.waitFor() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Runs a command in a directory and returns its standard output; fails on a non-zero exit. */
    public static String run(Path dir, List<String> command) {
        try {
            Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes());
            if (!process.waitFor(120, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("timed out: " + String.join(" ", command));
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException("failed (exit " + process.exitValue() + "): " + String.join(" ", command) + "\n" + output);
            }
            return output;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + command.get(0) + " (is a C compiler installed?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + String.join(" ", command), e);
        }
    }
}
