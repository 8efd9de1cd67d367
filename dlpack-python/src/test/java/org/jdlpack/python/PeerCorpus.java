package org.jdlpack.python;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.abi.DLTensorFlag;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.OwnedHostTensor;

/**
 * The differential corpus a peer suite runs: random dtype, shape and strides, compared byte for
 * byte with what the other side sees. Elements are compared in row-major order as raw bytes, so a
 * NaN payload, a negative zero or a float8 value is checked as exactly as an integer.
 *
 * <p>Java to peer: a random view ({@link Case}) over a buffer of random bytes, handed to Python as a
 * Java tensor object; the peer's consumer expression makes {@code y}, and the peer's own function
 * {@code hexof(y)} (not DLPack: the peer's copy to NumPy) gives its bytes. The export's reference
 * must be gone after Python drops {@code y}: the deleter ran once.
 *
 * <p>Peer to Java: the suite's Python function {@code make(seed)} makes a random peer tensor; Java
 * imports it with {@link PythonRuntime#importTensor} and compares its bytes with {@code hexof(v)}.
 * The producer's deleter must have run once after close.
 *
 * <p>Not thread-safe; one corpus per test.
 */
final class PeerCorpus {

    private static final HexFormat HEX = HexFormat.of();
    /** Cases whose export the peer released only after a {@code gc.collect()} or a wait, for the suite's report. */
    static final java.util.concurrent.atomic.AtomicLong COLLECTED = new java.util.concurrent.atomic.AtomicLong();

    /** A view over a buffer of {@code bufferElements}: shape, strides in elements, the first element's index. */
    record Case(DLDataType dtype, long[] shape, long[] strides, long firstElement, long bufferElements, boolean readOnly) {
        @Override
        public String toString() {
            return dtype + " shape " + Arrays.toString(shape) + " strides " + Arrays.toString(strides) + " first " + firstElement
                    + (readOnly ? " read-only" : "");
        }
    }

    private PeerCorpus() {
    }

    /** Which strides a corpus draws: what the peer takes. */
    enum Strides {
        /** Compact row-major only (TensorFlow, pyarrow arrays). */
        COMPACT,
        /** A permutation of a compact layout: transposed, not stepped, not broadcast (JAX). */
        PERMUTED,
        /** Stepped, padded, permuted and sometimes broadcast (PyTorch, NumPy). */
        ANY
    }

    /**
     * A random case: 0 to 4 dimensions of 0 to 5 elements; with {@link Strides#ANY} each stepped by
     * 1 to 3 over padded extents, permuted (a transposed view), sometimes broadcast (a 0 stride);
     * with {@link Strides#PERMUTED} only permuted. Both start at a random element (a byte_offset).
     */
    static Case random(SplittableRandom random, List<DLDataType> dtypes, Strides mode) {
        boolean strided = mode != Strides.COMPACT;
        boolean any = mode == Strides.ANY;
        DLDataType dtype = dtypes.get(random.nextInt(dtypes.size()));
        int ndim = random.nextInt(5);
        long[] shape = new long[ndim];
        for (int i = 0; i < ndim; i++) {
            shape[i] = random.nextInt(20) == 0 ? 0 : 1 + random.nextInt(5);
        }
        if (!strided) {
            long[] strides = new long[ndim];
            long step = 1;
            for (int i = ndim - 1; i >= 0; i--) {
                strides[i] = step;
                step *= Math.max(1, shape[i]);
            }
            return new Case(dtype, shape, strides, 0, Math.max(1, step), false);
        }
        // A compact buffer of stepped, padded extents, laid out in a random dimension order.
        long[] steps = new long[ndim];
        long[] extents = new long[ndim];
        for (int i = 0; i < ndim; i++) {
            steps[i] = any ? 1 + random.nextInt(3) : 1;
            extents[i] = Math.max(1, shape[i] * steps[i] + (any ? random.nextInt(2) : 0));
        }
        int[] order = permutation(random, ndim);
        long[] strides = new long[ndim];
        long step = 1;
        for (int k = ndim - 1; k >= 0; k--) {
            int dim = order[k];
            strides[dim] = step * steps[dim];
            step *= extents[dim];
        }
        for (int i = 0; i < ndim; i++) {
            if (any && shape[i] > 1 && random.nextInt(12) == 0) {
                strides[i] = 0; // broadcast
            }
        }
        long buffer = step + random.nextInt(4);
        long last = 0;
        for (int i = 0; i < ndim; i++) {
            last += shape[i] == 0 ? 0 : (shape[i] - 1) * strides[i];
        }
        long first = random.nextInt((int) Math.max(1, buffer - last));
        return new Case(dtype, shape, strides, first, buffer, false);
    }

    private static int[] permutation(SplittableRandom random, int n) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        return order;
    }

    /** Random bytes for every element of a buffer; bool elements 0 or 1 (other bytes are not bools). */
    static void fill(MemorySegment buffer, DLDataType dtype, SplittableRandom random) {
        byte[] bytes = new byte[(int) buffer.byteSize()];
        random.nextBytes(bytes);
        if (dtype.code() == DLDataTypeCode.BOOL) {
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] &= 1;
            }
        }
        MemorySegment.copy(bytes, 0, buffer, JAVA_BYTE, 0, bytes.length);
    }

    /** {@return the tensor's elements as bytes in row-major order, in hex} */
    static String rowMajorHex(HostTensorView view) {
        try (Arena arena = Arena.ofConfined()) {
            return HEX.formatHex(view.toContiguous(arena).segment().toArray(JAVA_BYTE));
        }
    }

    /**
     * Hands one random Java view to the peer: {@code consume} (Python, reading the global {@code x})
     * makes {@code y}, whose {@code hexof(y)} must be the view's bytes and {@code list(shapeof(y))}
     * its shape. Returns Python's refusal (its last line) instead when {@code refused} accepts it.
     */
    static void javaToPeer(PythonRuntime python, Case c, String consume, SplittableRandom random) {
        try (OwnedHostTensor base = OwnedHostTensor.allocate(c.dtype(), c.bufferElements())) {
            fill(base.host().segment(), c.dtype(), random);
            long elementBytes = c.dtype().bits() / 8;
            TensorSpec spec = TensorSpec.builder(base.spec().data(), c.dtype(), c.shape()).strides(c.strides())
                    .byteOffset(c.firstElement() * elementBytes).flags(c.readOnly() ? DLTensorFlag.READ_ONLY.mask() : 0).build();
            try (OwnedHostTensor view = OwnedHostTensor.wrap(spec, () -> { })) {
                String expected = rowMajorHex(view.host());
                PythonPeers.bind(python, "x", view);
                try {
                    python.exec("y = " + consume + "\ndel x");
                    assertThat(python.evalString("hexof(y)")).as("%s: the peer's bytes", c).isEqualTo(expected);
                    assertThat(python.evalString("shapeof(y)")).as("%s: the peer's shape", c).isEqualTo(pythonList(c.shape()));
                } finally {
                    python.exec("x = y = None"); // refcounting frees both at once; a gc.collect() per case would cost more than the case
                }
                if (view.references() != 1) {
                    // The peer released it later: from a reference cycle, or on a thread of its own (JAX once did, for a
                    // transposed tensor). Collect, and wait for the deleter (a deadline for an event, not a timing check).
                    COLLECTED.incrementAndGet();
                    python.exec("gc.collect()");
                    long deadline = System.nanoTime() + 5_000_000_000L;
                    while (view.references() != 1 && System.nanoTime() - deadline < 0) {
                        Thread.onSpinWait();
                        Thread.yield();
                    }
                }
                assertThat(view.references()).as("%s: the peer's deleter ran exactly once", c).isEqualTo(1);
            }
        }
    }

    /**
     * Imports {@code make(seed)} into Java: its bytes must be {@code hexof(v)}, its dtype
     * {@code dtypeof(v)}, its shape {@code shapeof(v)}; the producer's deleter runs once, at close.
     * {@return the imported tensor's dtype}
     */
    static DLDataType peerToJava(PythonRuntime python, long seed) {
        python.exec("v = make(" + seed + ")");
        String expected = python.evalString("hexof(v)");
        String dtype = python.evalString("dtypeof(v)");
        String shape = python.evalString("shapeof(v)");
        long pending = PythonPeers.pendingForeignTensors();
        try (PythonObject v = python.get("v")) {
            DLDataType seen;
            try (ImportedTensor imported = python.importTensor(v)) {
                python.exec("v = None"); // Java holds the peer's tensor alive on its own
                HostTensorView host = HostTensorView.of(imported);
                seen = host.layout().dtype();
                assertThat(seen.toString()).as("seed %d: dtype", seed).isEqualTo(dtype);
                assertThat(pythonList(host.layout().shape())).as("seed %d: shape", seed).isEqualTo(shape);
                assertThat(rowMajorHex(host)).as("seed %d %s: bytes", seed, host.layout()).isEqualTo(expected);
            }
            assertThat(PythonPeers.pendingForeignTensors()).as("seed %d: the producer's deleter ran exactly once", seed).isEqualTo(pending);
            return seen;
        }
    }

    static String pythonList(long[] values) {
        StringBuilder text = new StringBuilder("[");
        for (int i = 0; i < values.length; i++) {
            text.append(i == 0 ? "" : ", ").append(values[i]);
        }
        return text.append(']').toString();
    }
}
