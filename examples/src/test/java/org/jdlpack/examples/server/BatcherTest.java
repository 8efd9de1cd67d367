package org.jdlpack.examples.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.HostTensorPool;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.python.PythonException;
import org.jdlpack.python.PythonRuntime;
import org.jdlpack.python.PythonUnavailableException;
import org.jdlpack.testsupport.PeerRequirement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The batcher with the server's real pipeline (NumPy and ONNX Runtime), one run slot, and a gate
 * in front of the pipeline, so that which requests share a batch is the test's choice, not the
 * scheduler's: members join with their rows already in, a batch forms while another runs, and a
 * member whose rows hold NaN spoils nobody else's.
 */
@ExtendWith(NothingLeftBehind.class)
class BatcherTest {

    private static final int F = Classifier.FEATURES;

    @Test
    @Timeout(60)
    void membersJoinWithTheirBodiesInAndABatchFormsWhileAnotherRuns() throws Exception {
        requireNumPy();
        byte[] model;
        try (InputStream in = InferenceServer.class.getResourceAsStream("scorer.onnx")) {
            model = in.readAllBytes();
        }
        CountDownLatch gate = new CountDownLatch(1);
        try (HostTensorPool pool = HostTensorPool.create(16L << 20);
             Scorer scorer = new Scorer(model, 1);
             NumPyClassifier numpy = new NumPyClassifier(pool, scorer);
             ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            // One run slot, 8 rows a batch, a batch wait of a minute: a batch is sealed when it is full or nothing runs.
            Batcher batcher = new Batcher(pool, batch -> {
                gate.await();
                numpy.run(batch);
            }, 8, TimeUnit.MINUTES.toNanos(1), 1);

            OwnedHostTensor fillerBody = body(rows(1, 3));
            Batcher.Member filler = batcher.join(fillerBody, Classifier.Failure.NONE);
            assertThat(fillerBody.isClosed()).as("a body of fewer rows than a batch is copied into it and given back").isTrue();
            Future<?> first = threads.submit(() -> {
                filler.await();
                return null;
            });
            awaitStat(batcher, "batches", 1); // running, held at the gate: the only run slot is taken

            float[] nan = rows(2, 9);
            nan[F + 5] = Float.NaN;
            float[] good = rows(3, 7);
            Batcher.Member withNaN = batcher.join(body(nan), Classifier.Failure.NONE);
            Batcher.Member other = batcher.join(body(good), Classifier.Failure.NONE);
            assertThat(other.batch).as("both join the batch forming while the first runs").isSameAs(withNaN.batch);
            assertThat(other.batch).isNotSameAs(filler.batch);
            assertThat(stat(batcher, "formingRows")).isEqualTo(5);
            assertThat(other.offset).isEqualTo(2);
            float[] joined = new float[5 * F];
            other.batch.input.host().rows(0, 5).segment().asByteBuffer().order(java.nio.ByteOrder.nativeOrder()).asFloatBuffer()
                    .get(joined);
            assertThat(java.util.Arrays.copyOfRange(joined, 0, 2 * F)).as("the first member's rows, copied in")
                    .containsExactly(nan);
            assertThat(java.util.Arrays.copyOfRange(joined, 2 * F, 5 * F)).as("the second's, after them").containsExactly(good);

            Future<?> a = threads.submit(() -> {
                withNaN.await();
                return null;
            });
            Future<?> b = threads.submit(() -> {
                other.await();
                return null;
            });
            gate.countDown(); // the first batch runs and ends; the second, nothing else running, runs at once
            first.get();
            a.get();
            b.get();
            assertThat(stat(batcher, "batches")).isEqualTo(2);
            assertThat(stat(batcher, "batchedRequests")).isEqualTo(3);
            Batcher.Batch shared = other.batch;
            assertThat(shared.error).isNull();
            assertThat(new long[] {shared.finite.host().getLong(0), shared.finite.host().getLong(1)}).containsExactly(1, 0);
            for (int r = 0; r < 3; r++) {
                assertThat(shared.finite.host().getLong(other.offset + r)).as("row %d of the other member", r).isEqualTo(1);
            }

            // The other member's rows alone, in a batch of their own (a request of 8 rows or more: its
            // body is the batch's input, handed over): the same answers as inside the shared batch.
            float[] eight = new float[8 * F];
            System.arraycopy(good, 0, eight, 0, good.length);
            OwnedHostTensor eightBody = body(eight);
            Batcher.Member alone = batcher.join(eightBody, Classifier.Failure.NONE);
            assertThat(alone.batch.input).as("a body of a batch's rows or more is handed over, not copied").isSameAs(eightBody);
            assertThat(eightBody.isClosed()).isFalse();
            alone.await();
            for (int r = 0; r < 3; r++) {
                for (int k = 0; k < Classifier.TOP; k++) {
                    assertThat(alone.batch.top.host().getLongAt(r, k)).isEqualTo(shared.top.host().getLongAt(other.offset + r, k));
                    assertThat(alone.batch.probabilities.host().getDoubleAt(r, k)).as("row %d, class %d", r, k)
                            .isCloseTo(shared.probabilities.host().getDoubleAt(other.offset + r, k),
                                    org.assertj.core.data.Offset.offset(1e-6));
                }
            }
            alone.leave();
            assertThat(eightBody.isClosed()).as("the batch's last member closes its input").isTrue();
            for (Batcher.Member m : new Batcher.Member[] {filler, withNaN, other}) {
                m.leave();
            }
            assertThat(shared.input.isClosed()).isTrue();
            assertThat(stat(batcher, "ownBatches")).isEqualTo(1);
        }
    }

    private static OwnedHostTensor body(float[] values) {
        return OwnedHostTensor.copyOf(values, values.length / F, F);
    }

    private static float[] rows(int rows, int seed) {
        float[] x = new float[rows * F];
        for (int k = 0; k < x.length; k++) {
            x[k] = (seed * (k + 3) % 23) / 5f - 2;
        }
        return x;
    }

    private static long stat(Batcher batcher, String name) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(^| )" + name + "=(\\d+)").matcher(batcher.stats());
        assertThat(m.find()).as(batcher.stats()).isTrue();
        return Long.parseLong(m.group(2));
    }

    /** Waits (the test's timeout is the bound) until a stats field has a value. */
    private static void awaitStat(Batcher batcher, String name, long value) throws InterruptedException {
        while (stat(batcher, name) != value) {
            Thread.sleep(5);
        }
    }

    private static void requireNumPy() {
        try {
            PythonRuntime.get().exec("import numpy");
        } catch (PythonUnavailableException | PythonException e) {
            throw PeerRequirement.missing("NumPy", "the batch's pre- and post-processing run in NumPy: " + e.getMessage().lines()
                    .findFirst().orElse(""));
        }
    }
}
