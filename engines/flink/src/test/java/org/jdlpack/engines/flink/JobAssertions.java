package org.jdlpack.engines.flink;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.apache.flink.runtime.jobmaster.JobResult;

/** What every submission of the tensor job must show, whichever loader jdlpack came from. */
final class JobAssertions {

    private JobAssertions() {
    }

    static void assertSucceeded(JobResult result) {
        assertThat(result.isSuccess()).as("job result %s", result.getSerializedThrowable()
                .map(t -> t.getFullStringifiedStackTrace()).orElse("")).isTrue();
    }

    /** Two subtasks, one of them failed once and restarted; every attempt settled every tensor. */
    static void assertAttempts(FlinkSession.Outcome outcome) {
        assertAttempts(outcome, "job");
    }

    /**
     * As above, with jdlpack loaded by {@code jdlpackLoader}: "job" when the jar carries it (child-first),
     * else the name of the loader that does.
     */
    static void assertAttempts(FlinkSession.Outcome outcome, String jdlpackLoader) {
        List<Map<String, String>> attempts = outcome.attempts();
        assertThat(attempts).as("%s: one report per subtask attempt", outcome.job()).hasSize(FlinkSession.PARALLELISM + 1);
        assertThat(attempts).filteredOn(a -> a.get("failed").equals("true")).as("the induced failure").singleElement()
                .satisfies(a -> assertThat(a.get("attempt")).isEqualTo("0"));
        assertThat(attempts).filteredOn(a -> a.get("attempt").equals("1")).as("the restart").hasSize(1);
        for (Map<String, String> a : attempts) {
            assertThat(a.get("loaderClass")).as("the function's loader").contains("ChildFirst");
            assertThat(a.get("jdlpackLoader")).as("jdlpack's loader").contains(jdlpackLoader);
            assertThat(a.get("peerLoader")).as("the C peer's loader").contains(jdlpackLoader);
            assertThat(a.get("tensorsReleased")).as("Java tensors released: closed and every export's deleter ran, %s", a)
                    .isEqualTo(a.get("tensors"));
            assertThat(a.get("importsNotDeletedExactlyOnce")).as("C tensors whose deleter did not run exactly once, %s", a).isEqualTo("0");
        }
        long records = attempts.stream().filter(a -> a.get("failed").equals("false")).mapToLong(a -> Long.parseLong(a.get("imports"))).sum();
        assertThat(records).as("records processed by the attempts that finished").isEqualTo(FlinkSession.RECORDS);
    }
}
