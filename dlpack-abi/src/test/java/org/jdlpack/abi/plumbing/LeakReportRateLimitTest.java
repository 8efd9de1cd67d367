package org.jdlpack.abi.plumbing;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.System.Logger;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import org.jdlpack.abi.DLPackStats;
import org.junit.jupiter.api.Test;

/**
 * A program that leaks in a loop must not flood the log: leak reports are rate-limited by count,
 * while {@link DLPackStats#leaksReported()} stays exact. Log records are counted through a
 * System.Logger put in place of the library's with {@link Diagnostics#replaceLogger}.
 */
class LeakReportRateLimitTest {

    /** Keeps the messages it is given. */
    private static final class Recording implements Logger {
        final List<String> messages = new CopyOnWriteArrayList<>();

        @Override
        public String getName() {
            return "recording";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            messages.add(msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            messages.add(format);
        }

        @Override
        public void log(Level level, Supplier<String> msgSupplier) {
            messages.add(msgSupplier.get());
        }
    }

    @Test
    void tenThousandLeaksAreAllCountedButOnlyAFewAreLogged() {
        Recording recording = new Recording();
        Logger previous = Diagnostics.replaceLogger(recording);
        long before = DLPackStats.leaksReported();
        int leaks = 10_000;
        try {
            for (int i = 0; i < leaks; i++) {
                Ledger.reportLeak("test tensor " + i, null);
            }
        } finally {
            Diagnostics.replaceLogger(previous);
        }

        assertThat(DLPackStats.leaksReported() - before).as("every leak is counted").isEqualTo(leaks);
        List<String> leakRecords = recording.messages.stream().filter(m -> m.startsWith("LEAK: ")).toList();
        // At most the first 16 in full, then one per power of two: 14 below 10,000, plus leaks of earlier tests.
        assertThat(leakRecords).as("leak records logged").hasSizeBetween(1, Ledger.REPORTED_IN_FULL + 15);
        assertThat(leakRecords.getLast()).contains("only leak numbers that are powers of two are logged")
                .contains("DLPackStats.leaksReported() counts all");
    }
}
