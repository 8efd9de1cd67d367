package org.jdlpack.engines.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarFile;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * jdlpack shipped inside a Flink job jar: one session cluster, the same jar submitted three
 * times, each job with one induced failure and a fixed-delay restart. The TaskManager loads the
 * jar in a child-first class loader of the job's own; the function registers
 * {@code DLPackRuntime.release()} as that loader's release hook, so after each job the loader and
 * jdlpack's thread are gone. The last test is the control: without the hook, the loader stays.
 *
 * <p>jdlpack is not on this test's class path (Surefire leaves dlpack-abi, dlpack-cpu and
 * test-support out; see the pom), so the only copy the cluster can load is the jar's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FlinkJobJarTest {

    /** -Djdlpack.engines.releaseHook=false runs the main test without the hook: its class-loader assertion must then fail. */
    private static final boolean RELEASE_HOOK = Boolean.parseBoolean(System.getProperty("jdlpack.engines.releaseHook", "true"));
    private static final Duration UNLOAD_TIMEOUT = Duration.ofSeconds(Long.getLong("jdlpack.engines.unloadTimeout", 60));

    private Path work;
    private Path log;
    private Path jar;
    private EngineChecks.Capture capture;
    private FlinkSession session;
    private int logStart;

    @BeforeAll
    void startCluster() throws Exception {
        Requirements.cCompiler();
        work = Requirements.freshFolder("flink-job-jar");
        log = JobJar.property("jdlpack.engines.log");
        jar = JobJar.build(work, "tensor-job", true);
        capture = new EngineChecks.Capture();
        session = FlinkSession.start(Files.createDirectories(work.resolve("reports")), List.of());
        // From here on: the cluster's start logs that Hadoop is absent with a NoClassDefFoundError.
        logStart = EngineChecks.read(log).length();
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (session != null) {
            session.close();
        }
        if (capture != null) {
            capture.close();
        }
    }

    @Test
    @Order(1)
    void theJarHoldsJdlpackAndTheTestClassPathDoesNot() throws IOException {
        assertThatThrownBy(() -> Class.forName("org.jdlpack.abi.DLPackRuntime")).isInstanceOf(ClassNotFoundException.class);
        assertThatThrownBy(() -> Class.forName("org.jdlpack.testsupport.CPeer")).isInstanceOf(ClassNotFoundException.class);
        try (JarFile file = new JarFile(jar.toFile())) {
            assertThat(file.getEntry("org/jdlpack/abi/DLPackRuntime.class")).isNotNull();
            assertThat(file.getEntry("org/jdlpack/cpu/HostTensorView.class")).isNotNull();
            assertThat(file.getEntry("org/jdlpack/testsupport/CPeer.class")).isNotNull();
            assertThat(file.getEntry("org/jdlpack/testsupport/c/peer.c")).isNotNull();
            assertThat(file.getEntry("org/jdlpack/engines/flink/job/TensorFunction.class")).isNotNull();
            assertThat(file.getEntry("org/jdlpack/engines/flink/LoaderProbe.class")).as("the probe is the test's, parent-first").isNull();
        }
    }

    @Test
    @Order(2)
    void theClusterListensOnLoopbackOnly() throws Exception {
        assertThat(session.restAddress().getHost()).isEqualTo("127.0.0.1");
        assertThat(session.restAddress().getPort()).isPositive();
        List<String> listening = EngineChecks.listeningAddresses();
        assertThat(listening).as("listening sockets (hex, /proc/self/net/tcp*)").isNotEmpty().allMatch(EngineChecks::isLoopback);
    }

    @Test
    @Order(3)
    void threeSubmissionsEachInItsOwnLoaderReleasedWhenTheJobEnds() throws Exception {
        List<String> baseline = EngineChecks.jdlpackThreads();
        assertThat(baseline).as("jdlpack is not loaded by the test").isEmpty();
        Set<String> loaders = new HashSet<>();
        List<String> summary = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            String job = "job-" + i;
            FlinkSession.Outcome outcome = session.submit(jar, job, RELEASE_HOOK);
            JobAssertions.assertSucceeded(outcome.result());
            JobAssertions.assertAttempts(outcome);
            String loader = outcome.attempts().get(0).get("loader");
            assertThat(outcome.attempts()).as("every attempt of %s, the restart included, ran in one loader", job)
                    .allMatch(a -> a.get("loader").equals(loader));
            assertThat(loaders.add(loader)).as("%s ran in a loader of its own (ids so far: %s)", job, loaders).isTrue();
            assertThat(LoaderProbe.loaders(job)).isEqualTo(1);

            if (RELEASE_HOOK) {
                assertThat(outcome.awaitRelease(UNLOAD_TIMEOUT)).as("%s: the release hook's report", job)
                        .containsEntry("released", "true").containsEntry("quiet", "true");
            }
            long start = System.nanoTime();
            boolean collected = EngineChecks.awaitCollected(() -> LoaderProbe.live(job), UNLOAD_TIMEOUT);
            if (!collected) {
                assertThat(collected).as("%s's class loader was collected after the job ended and a GC (release hook %s; jdlpack threads: %s; heap dump: %s)",
                        job, RELEASE_HOOK ? "registered" : "NOT registered", EngineChecks.jdlpackThreads(), EngineChecks.dumpHeap(job)).isTrue();
            }
            assertThat(EngineChecks.awaitThreads(baseline, Duration.ofSeconds(10))).as("jdlpack's threads after %s", job).isEqualTo(baseline);
            summary.add(job + ": " + outcome.attempts().size() + " attempts, loader " + loader + " collected "
                    + (System.nanoTime() - start) / 1_000_000 + " ms after the hook ran");
        }
        summary.forEach(s -> System.out.println("FlinkJobJarTest " + s));
        List<String> problems = new ArrayList<>(EngineChecks.loaderProblems(EngineChecks.read(log).substring(logStart)));
        problems.addAll(EngineChecks.loaderProblems(capture.text()));
        assertThat(problems).as("class-loader problems in the logs (%s) and on stderr", log).isEmpty();
        assertThat(capture.records()).as("uncaught exceptions and java.util.logging records (jdlpack's leak reports go there)")
                .noneMatch(r -> r.startsWith("uncaught") || r.contains("org.jdlpack"));
    }

    /** The control: the same job without the release hook keeps its class loader and jdlpack's thread. */
    @Test
    @Order(4)
    void withoutTheReleaseHookTheLoaderAndTheThreadStay() throws Exception {
        String job = "job-without-hook";
        FlinkSession.Outcome outcome = session.submit(jar, job, false);
        JobAssertions.assertSucceeded(outcome.result());
        JobAssertions.assertAttempts(outcome);
        EngineChecks.awaitCollected(() -> LoaderProbe.live(job), Duration.ofSeconds(5));
        assertThat(LoaderProbe.live(job)).as("the loader without a release: jdlpack's upcall stubs and thread keep it").isEqualTo(1);
        assertThat(EngineChecks.jdlpackThreads()).contains("jdlpack-safety-net");
    }
}
