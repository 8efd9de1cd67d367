package org.jdlpack.engines.flink.job;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * The job the engine tests submit as a jar: a sequence of numbers through {@link TensorFunction},
 * which exports and imports tensors through the C peer for each one.
 *
 * <p>Arguments: the report folder, the job's name, the number of records, the record whose first
 * processing fails on purpose, and whether the function registers jdlpack's release hook.
 */
public final class TensorJob {

    private TensorJob() {
    }

    public static void main(String[] args) throws Exception {
        String reportDir = args[0];
        String job = args[1];
        long records = Long.parseLong(args[2]);
        long failAt = Long.parseLong(args[3]);
        boolean releaseHook = Boolean.parseBoolean(args[4]);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.fromSequence(1, records)
                .map(new TensorFunction(reportDir, job, failAt, releaseHook)).name("tensors")
                .sinkTo(new DiscardingSink<>());
        env.execute(job);
    }
}
