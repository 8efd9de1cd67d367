package org.jdlpack.benchmarks;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;

/**
 * A plain program, not JMH, that checks the JMH import figure: it imports a 2x3x4x5 float32 C
 * tensor through the public front door, reads one element and closes it, in a loop, and prints
 * the best and median ns/op of 11 rounds of a million, for the default and the scoped path.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar org.jdlpack.benchmarks.ImportLoop</pre>
 */
public final class ImportLoop {

    private static final int ROUNDS = 11;
    private static final int PER_ROUND = 1_000_000;

    private ImportLoop() {
    }

    /**
     * Runs the loops.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        MemorySegment managed = CPeer.get().quietDeleter(CPeer.get().make(PeerTensor.versioned().shape(2, 3, 4, 5))).pointer();
        report("import_loop_default_ns", () -> {
            float sum = 0;
            for (int i = 0; i < PER_ROUND; i++) {
                try (ImportedTensor tensor = ImportedTensor.of(ManagedTensorKind.VERSIONED, managed)) {
                    sum += tensor.hostSegment().get(JAVA_FLOAT_UNALIGNED, 4);
                }
            }
            return sum;
        });
        report("import_loop_scoped_ns", () -> {
            float sum = 0;
            for (int i = 0; i < PER_ROUND; i++) {
                sum += ImportedTensor.apply(ManagedTensorKind.VERSIONED, managed, t -> t.hostSegment().get(JAVA_FLOAT_UNALIGNED, 4));
            }
            return sum;
        });
        if (DLPackStats.ownedManagedTensors() != 0) {
            throw new AssertionError("owned managed tensors left: " + DLPackStats.ownedManagedTensors());
        }
    }

    private static void report(String name, java.util.function.DoubleSupplier round) {
        double[] perOp = new double[ROUNDS];
        double check = 0;
        for (int r = 0; r < ROUNDS; r++) {
            long start = System.nanoTime();
            check += round.getAsDouble();
            perOp[r] = (System.nanoTime() - start) / (double) PER_ROUND;
        }
        java.util.Arrays.sort(perOp);
        // The first rounds include JIT compilation; the best and the median say what the loop costs.
        System.out.printf("%s min %.1f median %.1f (checksum %.0f)%n", name, perOp[0], perOp[ROUNDS / 2], check);
    }
}
