package org.jdlpack.engines.flink;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.flink.client.program.PackagedProgram;
import org.apache.flink.client.program.PackagedProgramUtils;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;

/**
 * One Flink session cluster (a {@link MiniCluster}: one TaskManager with two slots, everything
 * bound to 127.0.0.1, REST on a free port) that jobs are submitted to as jars, the way
 * {@code flink run} submits them: the client runs the jar's main in a class loader of its own to
 * build the job graph, and the TaskManager loads the jar in a child-first user-code class loader.
 */
final class FlinkSession {

    static final int PARALLELISM = 2;
    static final long RECORDS = 200;
    /** The record whose first processing fails, in whichever subtask reads it. */
    static final long FAIL_AT = 77;

    private final MiniCluster cluster;
    private final Configuration configuration;
    private final Path reports;

    private FlinkSession(MiniCluster cluster, Configuration configuration, Path reports) {
        this.cluster = cluster;
        this.configuration = configuration;
        this.reports = reports;
    }

    /**
     * Starts the cluster.
     *
     * @param reports            where jobs write their reports
     * @param parentFirstPatterns added to {@code classloader.parent-first-patterns.additional}
     */
    static FlinkSession start(Path reports, List<String> parentFirstPatterns) throws Exception {
        Configuration conf = new Configuration();
        conf.set(JobManagerOptions.ADDRESS, "127.0.0.1");
        conf.set(JobManagerOptions.BIND_HOST, "127.0.0.1");
        conf.set(TaskManagerOptions.HOST, "127.0.0.1");
        conf.set(TaskManagerOptions.BIND_HOST, "127.0.0.1");
        conf.set(RestOptions.ADDRESS, "127.0.0.1");
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(RestOptions.PORT, 0);
        conf.set(RestOptions.BIND_PORT, "0");
        // The probe (a test class) parent-first, so that the job's function and the test share it.
        List<String> patterns = new ArrayList<>(List.of(LoaderProbe.class.getName()));
        patterns.addAll(parentFirstPatterns);
        conf.set(CoreOptions.ALWAYS_PARENT_FIRST_LOADER_PATTERNS_ADDITIONAL, patterns);
        // Every job restarts once after its induced failure.
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
        MiniCluster cluster = new MiniCluster(new MiniClusterConfiguration.Builder().setConfiguration(conf)
                .setNumTaskManagers(1).setNumSlotsPerTaskManager(PARALLELISM).build());
        cluster.start();
        return new FlinkSession(cluster, conf, reports);
    }

    URI restAddress() throws Exception {
        return cluster.getRestAddress().get(30, TimeUnit.SECONDS);
    }

    /** What one submission did: its result and the report files its tasks and hook wrote. */
    record Outcome(String job, JobResult result, List<Map<String, String>> attempts, Path reports) {

        /** {@return the release hook's report, once Flink has run the hook (it releases the loader after the job ends)} */
        Map<String, String> awaitRelease(Duration timeout) throws InterruptedException {
            Path file = reports.resolve(job + "-release.report");
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!Files.exists(file) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            return Files.exists(file) ? parse(file) : Map.of();
        }
    }

    /** Submits the jar as job {@code job}, waits for its result and reads its tasks' reports. */
    Outcome submit(Path jar, String job, boolean releaseHook) throws Exception {
        JobGraph graph;
        try (PackagedProgram program = PackagedProgram.newBuilder().setJarFile(jar.toFile())
                .setEntryPointClassName("org.jdlpack.engines.flink.job.TensorJob")
                .setArguments(reports.toString(), job, Long.toString(RECORDS), Long.toString(FAIL_AT), Boolean.toString(releaseHook))
                .setConfiguration(configuration).build()) {
            graph = PackagedProgramUtils.createJobGraph(program, configuration, PARALLELISM, false);
        }
        cluster.submitJob(graph).get(60, TimeUnit.SECONDS);
        JobResult result = cluster.requestJobResult(graph.getJobID()).get(120, TimeUnit.SECONDS);
        List<Map<String, String>> attempts = new ArrayList<>();
        try (Stream<Path> files = Files.list(reports)) {
            for (Path file : files.filter(f -> f.getFileName().toString().matches("\\Q" + job + "\\E-s\\d+-a\\d+\\.report")).sorted().toList()) {
                attempts.add(parse(file));
            }
        }
        return new Outcome(job, result, attempts, reports);
    }

    private static Map<String, String> parse(Path file) {
        try {
            Map<String, String> values = new LinkedHashMap<>();
            for (String line : Files.readAllLines(file)) {
                int eq = line.indexOf('=');
                values.put(line.substring(0, eq), line.substring(eq + 1));
            }
            return values;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    void close() throws Exception {
        cluster.close();
    }
}
