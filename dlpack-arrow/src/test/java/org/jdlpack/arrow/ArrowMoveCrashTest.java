package org.jdlpack.arrow;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float4Vector;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.ChildJvm;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The vector outlives the tensor it was moved from: the old owner's close must not free memory
 * the vector reads through raw addresses. When it did, the next {@code get} crashed the JVM in
 * {@code Unsafe_GetInt} (SIGSEGV, exit 134), so each case runs in a child JVM. The C peer's
 * deleter only counts; once it has run, the child frees the peer's memory as a real producer's
 * deleter would. The tensor is 4 MiB, so that {@code calloc} maps it and {@code free} unmaps it:
 * a read after the free faults instead of reading stale values.
 */
class ArrowMoveCrashTest {

    private static final int COUNT = 1 << 20;

    /** Child JVM: {@code try}, {@code apply} or {@code shared}. Prints one RESULT line. */
    public static void main(String[] args) {
        CPeer peer = CPeer.get();
        CPeer.Produced produced = peer.make(PeerTensor.versioned().shape(COUNT));
        try (BufferAllocator allocator = new RootAllocator()) {
            ArrowImport arrow = ArrowImport.into(allocator).zeroCopyOnly();
            ImportedVector vector = switch (args[0]) {
                case "try" -> {
                    try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
                        yield arrow.importTensor(tensor);
                    }
                }
                case "apply" -> ImportedTensor.apply(ManagedTensorKind.VERSIONED, produced.pointer(), arrow::importTensor);
                case "shared" -> {
                    ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer(), ImportLifetime.SHARED);
                    ImportedVector imported = arrow.importTensor(tensor);
                    tensor.close(); // later, elsewhere in the program
                    yield imported;
                }
                default -> throw new IllegalArgumentException(args[0]);
            };
            int deletedBeforeRead = peer.deleterCalls(produced.id());
            if (deletedBeforeRead > 0) {
                peer.reset(); // a real producer frees its memory in the deleter; this peer only counts until reset
            }
            Float4Vector values = (Float4Vector) vector.vector();
            double sum = 0;
            for (int i = 0; i < COUNT; i += 4096) {
                sum += values.get(i);
            }
            sum += values.get(COUNT - 1);
            vector.close();
            System.out.println("RESULT deletedBeforeRead=" + deletedBeforeRead + " sum=" + (long) sum + " deleted="
                    + peer.deleterCalls(produced.id()) + " owned=" + DLPackStats.ownedManagedTensors());
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"try", "apply", "shared"})
    void theOldOwnersCloseLeavesTheVectorsMemoryAlone(String scenario) {
        ChildJvm.Outcome outcome = ChildJvm.create().options("--add-opens=java.base/java.nio=ALL-UNNAMED")
                .run(ArrowMoveCrashTest.class, scenario);
        long expectedSum = 0;
        for (int i = 0; i < COUNT; i += 4096) {
            expectedSum += i; // the peer's float elements are 0, 1, 2, ...
        }
        expectedSum += COUNT - 1;
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output())
                .isEqualTo("RESULT deletedBeforeRead=0 sum=" + expectedSum + " deleted=1 owned=0");
    }
}
