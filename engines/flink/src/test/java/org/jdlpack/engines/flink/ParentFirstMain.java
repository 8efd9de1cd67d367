package org.jdlpack.engines.flink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The alternative to shipping jdlpack in the job jar: jdlpack on the cluster's own class path
 * (Flink's {@code lib/}) and {@code classloader.parent-first-patterns.additional: org.jdlpack.}.
 * Run by {@link FlinkParentFirstTest} in a JVM of its own whose class path holds jdlpack, as a
 * TaskManager started from a Flink distribution with jdlpack in lib/ would.
 *
 * <p>jdlpack then lives as long as the cluster: no release hook (one job's release would race with
 * the other jobs' jdlpack calls), one safety-net thread for the process, and each job's loader,
 * which holds only the job's own classes, is collected after the job.
 *
 * <p>Prints {@code RESULT ok} and exits 0, or prints the failure and exits 1.
 */
public final class ParentFirstMain {

    private ParentFirstMain() {
    }

    public static void main(String[] args) {
        try {
            run();
            System.out.println("RESULT ok");
            System.exit(0);
        } catch (Throwable t) {
            t.printStackTrace(System.out);
            System.out.println("RESULT failed: " + t);
            System.exit(1);
        }
    }

    private static void run() throws Exception {
        Requirements.cCompiler();
        Class<?> stats = Class.forName("org.jdlpack.abi.DLPackStats");
        assertThat(stats.getClassLoader()).as("jdlpack on the cluster's class path").isSameAs(ClassLoader.getSystemClassLoader());
        Path work = Requirements.freshFolder("flink-parent-first");
        Path log = JobJar.property("jdlpack.engines.log");
        Path jar = JobJar.build(work, "tensor-job-only", false);
        FlinkSession session = FlinkSession.start(Files.createDirectories(work.resolve("reports")), List.of("org.jdlpack."));
        int logStart = EngineChecks.read(log).length();
        try {
            Set<String> loaders = new HashSet<>();
            for (int i = 1; i <= 3; i++) {
                String job = "lib-job-" + i;
                FlinkSession.Outcome outcome = session.submit(jar, job, false);
                JobAssertions.assertSucceeded(outcome.result());
                JobAssertions.assertAttempts(outcome, "AppClassLoader");
                assertThat(loaders.add(outcome.attempts().get(0).get("loader"))).as("%s ran in a loader of its own", job).isTrue();
                // What held a finished job's loader here, under load, was neither jdlpack nor Flink but the
                // JDK's serialization caches, until an object is next written and read (heap dumps of the
                // failures, docs/engines.md "Under load"); awaitCollected does both after each collection,
                // as a TaskManager does at each deployment.
                boolean collected = EngineChecks.awaitCollected(() -> LoaderProbe.live(job), Duration.ofSeconds(60));
                if (!collected) {
                    assertThat(collected).as("%s's class loader collected without a release hook: jdlpack holds none of its classes (heap dump: %s)",
                            job, EngineChecks.dumpHeap(job)).isTrue();
                }
                assertThat(EngineChecks.jdlpackThreads()).as("the process's one safety net").isSubsetOf("jdlpack-safety-net");
                Object snapshot = stats.getMethod("snapshot").invoke(null);
                assertThat((boolean) snapshot.getClass().getMethod("isQuiet").invoke(snapshot)).as("after %s: %s", job, snapshot).isTrue();
                System.out.println("ParentFirstMain " + job + ": " + outcome.attempts().size() + " attempts, loader collected, " + snapshot);
            }
            assertThat(EngineChecks.loaderProblems(EngineChecks.read(log).substring(logStart))).as("class-loader problems in %s", log).isEmpty();
        } finally {
            session.close();
        }
    }
}
