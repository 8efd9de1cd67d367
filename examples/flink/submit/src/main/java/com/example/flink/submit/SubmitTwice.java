package com.example.flink.submit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.client.program.PackagedProgram;
import org.apache.flink.client.program.PackagedProgramUtils;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;

/**
 * Submits a job jar twice to a MiniCluster (one TaskManager, two slots, everything on 127.0.0.1),
 * the way {@code flink run} submits to a session cluster: the jar's main builds the job graph in a
 * class loader of its own, and the TaskManager runs the tasks in a child-first class loader of the
 * job's own. After each job it prints the job's accumulators, then waits until every class loader
 * that loaded the job's function has been unloaded ({@link UnloadWatch}); exit status 1 if one stays.
 *
 * <p>Arguments: the job jar; optionally the number of records per job (default 1000).
 */
public final class SubmitTwice {

    static final String FUNCTION = "com.example.flink.EmbedFunction";
    private static final int PARALLELISM = 2;

    private SubmitTwice() {
    }

    public static void main(String[] args) throws Exception {
        Path jar = Path.of(args[0]);
        if (!Files.isRegularFile(jar)) {
            throw new IllegalArgumentException("no job jar at " + jar + ": run mvn package first");
        }
        String records = args.length > 1 ? args[1] : "1000";
        Configuration conf = new Configuration();
        conf.set(JobManagerOptions.ADDRESS, "127.0.0.1");
        conf.set(JobManagerOptions.BIND_HOST, "127.0.0.1");
        conf.set(TaskManagerOptions.HOST, "127.0.0.1");
        conf.set(TaskManagerOptions.BIND_HOST, "127.0.0.1");
        conf.set(RestOptions.ADDRESS, "127.0.0.1");
        conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
        conf.set(RestOptions.BIND_PORT, "0");
        boolean allUnloaded = true;
        try (UnloadWatch watch = UnloadWatch.start(FUNCTION);
             MiniCluster cluster = new MiniCluster(new MiniClusterConfiguration.Builder().setConfiguration(conf)
                     .setNumTaskManagers(1).setNumSlotsPerTaskManager(PARALLELISM).build())) {
            cluster.start();
            for (int i = 1; i <= 2; i++) {
                String name = "jdlpack-example-" + i;
                JobExecutionResult result = submit(cluster, conf, jar, name, records);
                System.out.println(name + " finished: " + result.getAccumulatorResult("tensors") + " tensors exported and taken back, sum "
                        + result.getAccumulatorResult("sum"));
                UnloadWatch.Result unload = watch.awaitUnloaded(Duration.ofSeconds(60));
                System.out.println(name + ": " + unload);
                allUnloaded &= unload.allUnloaded();
            }
        }
        System.exit(allUnloaded ? 0 : 1);
    }

    /** Builds the job graph from the jar as {@code flink run} does, submits it and waits for its result. */
    private static JobExecutionResult submit(MiniCluster cluster, Configuration conf, Path jar, String name, String records)
            throws Exception {
        JobGraph graph;
        try (PackagedProgram program = PackagedProgram.newBuilder().setJarFile(jar.toFile())
                .setArguments(name, records).setConfiguration(conf).build()) {
            graph = PackagedProgramUtils.createJobGraph(program, conf, PARALLELISM, false);
        }
        cluster.submitJob(graph).get(60, TimeUnit.SECONDS);
        JobResult result = cluster.requestJobResult(graph.getJobID()).get(300, TimeUnit.SECONDS);
        // Throws the job's failure; the accumulators are plain numbers, so this loader reads them.
        return result.toJobExecutionResult(SubmitTwice.class.getClassLoader());
    }
}
