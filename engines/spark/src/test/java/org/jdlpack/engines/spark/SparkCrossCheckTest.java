package org.jdlpack.engines.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.Float4Vector;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.launcher.JavaModuleOptions;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.arrow.ArrowImport;
import org.jdlpack.arrow.ImportedVector;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.NativeBuild;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.PeerRequirement;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * jdlpack inside Spark 4.2.0, local[2] in this JVM with the flags spark-submit passes: a
 * mapPartitions that exports and imports tensors through the C peer, with one task failure that
 * Spark retries, and a dlpack-arrow vector over C memory read through Spark's ArrowColumnVector.
 *
 * <p>Local mode runs the executor's tasks in this JVM and class loader: jdlpack is on the
 * application class path, as it is in an executor that gets it with {@code --jars} or
 * {@code spark.executor.extraClassPath}, and it lives as long as the executor (no release).
 */
@ExtendWith(NothingLeftBehind.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SparkCrossCheckTest {

    /** Every task attempt's report, the failed one included: local mode shares this class with the tasks. */
    static final ConcurrentLinkedQueue<String> ATTEMPTS = new ConcurrentLinkedQueue<>();
    static final int PARTITIONS = 4;
    static final long RECORDS = 400;

    private SparkSession spark;

    @BeforeAll
    void startSpark() {
        if (!NativeBuild.compilerAvailable()) {
            throw PeerRequirement.missing("a C compiler", "the C peer is compiled at test time: install gcc");
        }
        CPeer.get();
        // local[2,2]: local[2], whose tasks may fail twice (plain local mode never retries a task).
        spark = SparkSession.builder().master("local[2,2]").appName("jdlpack-cross-check")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .getOrCreate();
    }

    @AfterAll
    void stopSpark() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void runsWithTheFlagsSparkSubmitPasses() {
        List<String> jvm = ManagementFactory.getRuntimeMXBean().getInputArguments();
        assertThat(jvm).as("this JVM's options").contains(JavaModuleOptions.defaultModuleOptionArray())
                .contains("--enable-native-access=ALL-UNNAMED", "--illegal-native-access=deny");
        assertThat(System.getenv("SPARK_LOCAL_IP")).isEqualTo("127.0.0.1");
    }

    @Test
    void sparkAndDlpackArrowShareOneArrow() throws Exception {
        List<URL> copies = Collections.list(getClass().getClassLoader().getResources("org/apache/arrow/vector/Float4Vector.class"));
        assertThat(copies).as("arrow-vector jars on the class path").hasSize(1);
        assertThat(Float4Vector.class.getPackage().getImplementationVersion()).as("the Arrow on the class path")
                .isEqualTo(System.getProperty("jdlpack.arrow.version"));
    }

    @Test
    void mapPartitionsExportsAndImportsThroughTheCPeerAndOneFailedTaskIsRetried() {
        ATTEMPTS.clear();
        List<String> results = spark.range(0, RECORDS, 1, PARTITIONS).as(Encoders.LONG())
                .mapPartitions(new TensorPartition(), Encoders.STRING()).collectAsList();
        List<Map<String, String>> finished = results.stream().map(SparkCrossCheckTest::parse).toList();
        List<Map<String, String>> all = ATTEMPTS.stream().map(SparkCrossCheckTest::parse).toList();
        System.out.println("SparkCrossCheckTest attempts: " + ATTEMPTS);

        assertThat(finished).extracting(r -> r.get("partition")).containsExactlyInAnyOrder("0", "1", "2", "3");
        assertThat(finished.stream().mapToLong(r -> Long.parseLong(r.get("tensors"))).sum()).isEqualTo(RECORDS);
        assertThat(all).filteredOn(r -> r.get("failed").equals("true")).as("the induced failure").singleElement()
                .satisfies(r -> assertThat(r).containsEntry("partition", "1").containsEntry("attempt", "0"));
        assertThat(finished).filteredOn(r -> r.get("partition").equals("1")).singleElement()
                .satisfies(r -> assertThat(r).containsEntry("attempt", "1"));
        for (Map<String, String> r : all) {
            assertThat(r.get("released")).as("Java tensors released (closed, every export's deleter ran): %s", r).isEqualTo(r.get("tensors"));
            assertThat(r.get("importsNotDeletedExactlyOnce")).as("C tensors whose deleter did not run exactly once: %s", r).isEqualTo("0");
        }
        assertThat(DLPackStats.snapshot().isQuiet()).as("%s", DLPackStats.snapshot()).isTrue();
    }

    @Test
    void aDlpackArrowVectorOverCMemoryIsReadThroughArrowColumnVectorWithoutACopy() {
        CPeer peer = CPeer.get();
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(6));
        long data = peer.field(produced.pointer(), false, 10);
        // Spark's own root allocator (Arrow 19 with Spark's Netty allocation manager) accounts for it.
        try (BufferAllocator allocator = ArrowUtils.rootAllocator().newChildAllocator("jdlpack", 0, Long.MAX_VALUE)) {
            try (ImportedVector imported = ArrowImport.into(allocator).zeroCopyOnly().importTensor(ManagedTensorKind.VERSIONED, produced.pointer())) {
                assertThat(imported.isCopy()).isFalse();
                Float4Vector vector = (Float4Vector) imported.vector();
                assertThat(vector.getDataBuffer().memoryAddress()).as("the vector's values are the C tensor's memory").isEqualTo(data);

                ArrowColumnVector column = new ArrowColumnVector(vector);
                ColumnarBatch batch = new ColumnarBatch(new ColumnVector[] {column}, vector.getValueCount());
                for (int i = 0; i < 6; i++) {
                    assertThat(column.getFloat(i)).isEqualTo((float) i);
                }
                // C writes 100, 101, ... into its tensor; Spark reads them through the same memory: nothing was copied.
                peer.fillF32(produced.pointer(), false, 100f, 1f);
                InternalRow row = batch.getRow(3);
                assertThat(row.getFloat(0)).isEqualTo(103f);
                assertThat(peer.deleterCalls(produced.id())).as("the producer's deleter waits for the vector").isZero();
            }
            assertThat(peer.deleterCalls(produced.id())).as("closing the vector ran the producer's deleter").isEqualTo(1);
        }

        // And a Java tensor: exported, imported as an Arrow vector, read by Spark, released once.
        AtomicLong released = new AtomicLong();
        float[] values = {1.5f, 2.5f, 3.5f};
        OwnedHostTensor tensor = OwnedHostTensor.copyOf(values, 3);
        try (BufferAllocator allocator = ArrowUtils.rootAllocator().newChildAllocator("jdlpack-java", 0, Long.MAX_VALUE)) {
            try (ImportedVector imported = ArrowImport.into(allocator).zeroCopyOnly().importTensor(tensor.export())) {
                ArrowColumnVector column = new ArrowColumnVector(imported.vector());
                assertThat(((Float4Vector) imported.vector()).getDataBuffer().memoryAddress()).isEqualTo(tensor.spec().data().address());
                assertThat(List.of(column.getFloat(0), column.getFloat(1), column.getFloat(2))).containsExactly(1.5f, 2.5f, 3.5f);
                tensor.close(); // Java's reference; the vector's keeps the memory
                assertThat(column.getFloat(2)).isEqualTo(3.5f);
                released.set(tensor.references());
            }
            assertThat(released.get()).as("references while only the vector held it").isEqualTo(1);
            assertThat(tensor.references()).as("released when the vector closed").isZero();
        }
    }

    private static Map<String, String> parse(String report) {
        return Stream.of(report.split(" ")).map(kv -> kv.split("=", 2)).collect(Collectors.toMap(kv -> kv[0], kv -> kv[1]));
    }

    /**
     * One task: for each record, exports a Java tensor that C reads and deletes (on this thread or a
     * pthread of its own) and imports a C tensor that Java reads and closes. Partition 1's first
     * attempt fails halfway, with an export still being deleted on a C thread.
     */
    static final class TensorPartition implements MapPartitionsFunction<Long, String> {

        private static final long serialVersionUID = 1L;

        @Override
        public Iterator<String> call(Iterator<Long> input) {
            TaskContext task = TaskContext.get();
            CPeer peer = CPeer.get();
            AtomicLong released = new AtomicLong();
            List<Integer> produced = new ArrayList<>();
            List<Long> pending = new ArrayList<>();
            long tensors = 0;
            long seen = 0;
            boolean failed = false;
            OwnedHostTensor inFlight = null;
            String report;
            try {
                while (input.hasNext()) {
                    long value = input.next();
                    seen++;
                    OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {value, value + 1, value + 2, value + 3}, 2, 2);
                    inFlight = tensor;
                    tensors++;
                    MemorySegment managed = tensor.export().consume();
                    if (peer.sumF32(managed, false) != 4.0 * value + 6) {
                        throw new IllegalStateException("C read a wrong sum from the export of " + value);
                    }
                    if (value % 2 == 0) {
                        peer.deleteOnNewThread(managed, false);
                    } else {
                        peer.delete(managed, false);
                    }
                    CPeer.Produced made = peer.make(PeerTensor.versioned());
                    produced.add(made.id());
                    try (ImportedTensor imported = ImportedTensor.of(ManagedTensorKind.VERSIONED, made.pointer())) {
                        if (HostTensorView.of(imported).getFloat(5) != 5f) {
                            throw new IllegalStateException("Java read a wrong value from the C tensor");
                        }
                        if (task.partitionId() == 1 && task.attemptNumber() == 0 && seen == RECORDS / PARTITIONS / 2) {
                            pending.add(peer.deleteAsync(tensor.export().consume(), false));
                            failed = true;
                            throw new IllegalStateException("induced failure in partition 1, attempt 0");
                        }
                    }
                    tensor.close();
                    if (tensor.references() == 0) { // closed, and every export's deleter ran: the memory is released
                        released.incrementAndGet();
                    }
                    inFlight = null;
                }
            } finally {
                for (long thread : pending) {
                    peer.join(thread);
                }
                if (inFlight != null) {
                    inFlight.close();
                    if (inFlight.references() == 0) {
                        released.incrementAndGet();
                    }
                }
                long wrong = produced.stream().filter(id -> peer.deleterCalls(id) != 1).count();
                report = "partition=" + task.partitionId() + " attempt=" + task.attemptNumber() + " failed=" + failed + " tensors=" + tensors
                        + " released=" + released.get() + " importsNotDeletedExactlyOnce=" + wrong + " liveExports=" + DLPackStats.liveExports();
                ATTEMPTS.add(report);
            }
            return List.of(report).iterator();
        }
    }
}
