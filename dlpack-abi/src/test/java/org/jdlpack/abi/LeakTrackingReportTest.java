package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.jdlpack.abi.testing.Collect;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;

/**
 * With {@code -Dorg.jdlpack.leakTracking=true}, a leaked tensor is reported with the stack trace of
 * its creation, and live objects can be listed with theirs. Runs in a child JVM, because the
 * switch is read once at start-up.
 */
class LeakTrackingReportTest {

    private static final List<ExportedTensor> KEPT = new ArrayList<>();

    /** Child JVM: leak one imported tensor and one export owner, keep one export handle alive, report them. */
    public static void main(String[] args) throws InterruptedException {
        System.out.println("TRACKING " + DLPackStats.leakTrackingEnabled());
        leakAnImportedTensor();
        leakAnOwner();
        Arena arena = Arena.ofShared();
        ExportOwner owner = ExportOwner.of(arena, arena::close);
        KEPT.add(keepAnExportAlive(owner, arena));
        for (String site : DLPackStats.liveAllocationSites()) {
            System.out.println("LIVE " + site.replace('\n', '|'));
        }
        listAScopedImport();
        Collect.until(() -> DLPackStats.leaksReported() >= 2, Duration.ofSeconds(30));
        System.out.println("LEAKS " + DLPackStats.leaksReported());
        KEPT.forEach(ExportedTensor::close);
        owner.close();
    }

    private static void leakAnImportedTensor() {
        CPeer.Produced produced = CPeer.get().make(PeerTensor.versioned());
        ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer()); // never closed
    }

    /** A scoped import has no safety-net entry (a plain ownership), but tracking lists it while the action runs, and not after. */
    private static void listAScopedImport() {
        CPeer.Produced produced = CPeer.get().make(PeerTensor.versioned());
        String address = "ImportedTensor(DLManagedTensorVersioned at 0x" + Long.toHexString(produced.pointer().address());
        Predicate<String> mine = site -> site.startsWith(address + ")") || site.startsWith(address + ",");
        ImportedTensor.apply(ManagedTensorKind.VERSIONED, produced.pointer(), tensor -> {
            DLPackStats.liveAllocationSites().stream().filter(mine)
                    .forEach(site -> System.out.println("SCOPED " + site.replace('\n', '|')));
            return null;
        });
        System.out.println("SCOPED AFTER " + DLPackStats.liveAllocationSites().stream().filter(mine).count());
    }

    private static void leakAnOwner() {
        Arena arena = Arena.ofShared();
        ExportOwner.of(arena, arena::close); // never closed
    }

    private static ExportedTensor keepAnExportAlive(ExportOwner owner, Arena arena) {
        return owner.export(TensorSpec.of(arena.allocate(16), DLDataType.FLOAT32, 4));
    }

    @Test
    void aLeakedTensorIsReportedWithItsCreationSite() throws Exception {
        List<String> command = List.of(ProcessHandle.current().info().command().orElseThrow(), "--enable-native-access=ALL-UNNAMED",
                "-Dorg.jdlpack.leakTracking=true", "-cp", System.getProperty("java.class.path"), LeakTrackingReportTest.class.getName());
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("JDLPACK_BUILD_DIR", System.getenv().getOrDefault("JDLPACK_BUILD_DIR", "target"));
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(output).contains("TRACKING true").contains("LEAKS 2");
        assertThat(output).containsPattern("LEAK: ExportOwner\\(.*\\) was never closed").contains("LeakTrackingReportTest.leakAnOwner");
        assertThat(output).contains("LEAK: ImportedTensor(DLManagedTensorVersioned")
                .contains("created here")
                .contains("LeakTrackingReportTest.leakAnImportedTensor");
        assertThat(output).containsPattern("LIVE export \\d+ \\(DLManagedTensorVersioned at 0x[0-9a-f]+\\) is alive, "
                + "java.lang.Throwable: created here.*keepAnExportAlive");
        assertThat(output).containsPattern("LIVE ExportedTensor\\(DLManagedTensorVersioned at 0x[0-9a-f]+\\) is alive, .*keepAnExportAlive");
        assertThat(output).containsPattern("SCOPED ImportedTensor\\(DLManagedTensorVersioned at 0x[0-9a-f]+\\) is alive, .*listAScopedImport")
                .contains("SCOPED AFTER 0");
    }
}
