package org.jdlpack.engines.flink;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;

/** What the engine tests need from the machine: the C compiler for the peer. */
final class Requirements {

    private Requirements() {
    }

    /** Skips without gcc, fails in CI (as test-support's PeerRequirement, which is not on this class path). */
    static void cCompiler() {
        String cc = System.getenv().getOrDefault("CC", "gcc");
        boolean available;
        try {
            Process p = new ProcessBuilder(cc, "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            available = p.waitFor() == 0;
        } catch (IOException e) {
            available = false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            available = false;
        }
        if (!available) {
            String message = "the C compiler " + cc + " is not available (the C peer is compiled at test time): install gcc";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                throw new AssertionError("CI=true and a required test peer is missing. " + message);
            }
            System.out.println("SKIPPED (" + message + ")");
            Assumptions.abort(message);
        }
    }

    /** {@return an empty folder under the module's target folder} */
    static Path freshFolder(String name) {
        Path dir = Path.of(System.getenv().getOrDefault("JDLPACK_BUILD_DIR", "target"), name).toAbsolutePath();
        try {
            if (Files.exists(dir)) {
                try (Stream<Path> walk = Files.walk(dir)) {
                    for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                        Files.delete(p);
                    }
                }
            }
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
