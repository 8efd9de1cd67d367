package org.jdlpack.benchmarks;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.onnxruntime.GuardedSession;
import org.jdlpack.onnxruntime.OrtBridge;
import org.jdlpack.onnxruntime.OrtInput;
import org.jdlpack.onnxruntime.OrtOutput;

/**
 * What the bridge's run holds cost, measured interleaved (one round of each case in turn, so that a
 * noisy moment of a shared machine hits all of them): a run of {@code tiny.onnx} by hand (its
 * {@code OnnxTensor}s over the same memory, no bridge), with reused
 * allocated tensors and a bare session, and the same through a {@link GuardedSession}. (Until issue
 * 43 it also measured wrapped tensors, whose scopes each run held inside a libc {@code bsearch}
 * upcall; the bridge now copies a wrapped input once and refuses a wrapped output, so no run holds
 * anything but its inputs, outputs and session.) Prints the best and median ns/op of the rounds.
 *
 * <pre>java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar org.jdlpack.benchmarks.OrtHoldCost [rounds]</pre>
 */
public final class OrtHoldCost {

    private OrtHoldCost() {
    }

    @FunctionalInterface
    private interface Op {
        void run() throws Exception;
    }

    /**
     * Runs the cases.
     *
     * @param args the number of rounds (default 15)
     * @throws Exception if ONNX Runtime fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        OrtSession.SessionOptions options = new OrtSession.SessionOptions();
        options.setIntraOpNumThreads(1);
        Path model = Path.of("dlpack-onnxruntime/src/test/resources/org/jdlpack/onnxruntime/tiny.onnx");
        OrtBridge ort = OrtBridge.of(env);
        float[] x = {1, 2, 3, 4, 5, 6, 7, 8};
        try (GuardedSession guarded = GuardedSession.of(env.createSession(Files.readAllBytes(model), options));
             OwnedHostTensor xAllocated = OwnedHostTensor.copyOf(x, 2, 4);
             OwnedHostTensor yAllocated = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2, 3);
             OrtInput xa = ort.input(xAllocated); OrtOutput ya = ort.output(yAllocated)) {
            OrtSession bare = guarded.session();
            // ONNX Runtime Java by hand over the same memory: the floor the bridge's run adds to.
            OnnxTensor xHand = OnnxTensor.createTensor(env, xAllocated.host().segment().asByteBuffer()
                    .order(ByteOrder.nativeOrder()).asFloatBuffer(), new long[] {2, 4});
            OnnxTensor yHand = OnnxTensor.createTensor(env, yAllocated.host().segment().asByteBuffer()
                    .order(ByteOrder.nativeOrder()).asFloatBuffer(), new long[] {2, 3});
            Map<String, OrtInput> allocatedIn = Map.of("x", xa);
            Map<String, OrtOutput> allocatedOut = Map.of("y", ya);
            String[] names = {"run by hand: OrtSession.run over OnnxTensors, no bridge", "run: bare session, allocated tensors",
                "run: GuardedSession, allocated tensors"};
            int[] perRound = {5_000, 5_000, 5_000};
            Op[] ops = {
                () -> bare.run(Map.of("x", xHand), Map.of("y", yHand)).close(),
                () -> ort.run(bare, allocatedIn, allocatedOut),
                () -> ort.run(guarded, allocatedIn, allocatedOut),
            };
            double[][] ns = new double[ops.length][rounds];
            for (int r = -3; r < rounds; r++) { // three rounds of warm-up
                for (int k = 0; k < ops.length; k++) {
                    long start = System.nanoTime();
                    for (int i = 0; i < perRound[k]; i++) {
                        ops[k].run();
                    }
                    if (r >= 0) {
                        ns[k][r] = (System.nanoTime() - start) / (double) perRound[k];
                    }
                }
            }
            System.out.println("case\tns/op best\tns/op median");
            for (int k = 0; k < ops.length; k++) {
                double[] sorted = ns[k].clone();
                Arrays.sort(sorted);
                System.out.println(String.format(Locale.ROOT, "%s\t%.0f\t%.0f", names[k], sorted[0], sorted[rounds / 2]));
            }
            xHand.close();
            yHand.close();
        }
    }
}
