package com.example.flink;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * A Flink job that uses jdlpack in its tasks: the numbers 1 to N (argument 1, default 1000) through
 * {@link EmbedFunction}. The job's name is argument 0 (default "jdlpack-example").
 */
public final class EmbedJob {

    private EmbedJob() {
    }

    public static void main(String[] args) throws Exception {
        String name = args.length > 0 ? args[0] : "jdlpack-example";
        long records = args.length > 1 ? Long.parseLong(args[1]) : 1000;
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.fromSequence(1, records)
                .map(new EmbedFunction()).name("jdlpack")
                .sinkTo(new DiscardingSink<>());
        env.execute(name);
    }
}
