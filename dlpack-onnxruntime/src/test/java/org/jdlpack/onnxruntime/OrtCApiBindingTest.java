package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.testing.Collect;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.internal.HostMemory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * IOBinding through the C route: inputs and outputs bound once, runs that read the inputs' memory
 * as it is then and write the outputs in place, and a binding that holds what ONNX Runtime's
 * binding refers to until it is released, once.
 */
@ExtendWith({NothingLeftBehind.class, NoOrtObjectLeft.class})
class OrtCApiBindingTest {

    private static final int FLOAT = 1;

    private long values;
    private long sessions;

    @BeforeEach
    void counts() {
        values = OrtApi.LIVE_VALUES.get();
        sessions = OrtApi.LIVE_SESSIONS.get();
    }

    @Test
    void inputsAndOutputsBoundOnceServeAThousandRunsOverMemoryChangedInPlace() {
        int n = 16;
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.unary("Neg", FLOAT), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, n);
             OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.FLOAT32, n);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             OrtCApiTensor yt = OrtCApiSession.tensor(y);
             OrtCApiBinding binding = session.bind(Map.of("x", xt), Map.of("y", yt))) {
            MemorySegment xs = HostMemory.elements(x);
            MemorySegment ys = HostMemory.elements(y);
            long bound = OrtApi.LIVE_VALUES.get();
            for (int run = 0; run < 1000; run++) {
                float[] expected = new float[n];
                for (int i = 0; i < n; i++) {
                    xs.setAtIndex(ValueLayout.JAVA_FLOAT, i, run * 100 + i); // the bound input, changed in place
                    expected[i] = -(float) (run * 100 + i);
                }
                binding.run();
                assertThat(ys.toArray(ValueLayout.JAVA_FLOAT)).as("run %d", run).containsExactly(expected);
            }
            assertThat(OrtApi.LIVE_VALUES.get()).as("no value made or left by the runs").isEqualTo(bound);
        }
    }

    @ParameterizedTest
    @MethodSource("org.jdlpack.onnxruntime.OrtCApiSessionTest#types")
    void everyTypeIsBoundAsInputAndOutput(DLDataType dtype, int onnxType) {
        int n = 24;
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(onnxType), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(dtype, n);
             OwnedHostTensor y = OwnedHostTensor.allocate(dtype, n);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             OrtCApiTensor yt = OrtCApiSession.tensor(y);
             OrtCApiBinding binding = session.bind(Map.of("x", xt), Map.of("y", yt))) {
            for (int run = 0; run < 3; run++) {
                byte[] bytes = OrtCApiSessionTest.fill(x, dtype);
                HostMemory.elements(x).set(ValueLayout.JAVA_BYTE, run, (byte) 0); // a different input each run
                bytes[run] = 0;
                binding.run();
                assertThat(HostMemory.elements(y).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(bytes);
            }
        }
    }

    @Test
    void aCloseDuringARunTakesEffectWhenTheRunEnds() {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(FLOAT), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             OrtCApiTensor yt = OrtCApiSession.tensor(x)) {
            long before = OrtApi.LIVE_IO_BINDINGS.get();
            OrtCApiBinding binding = session.bind(Map.of("x", xt), Map.of("y", yt));
            binding.run();
            binding.lease.borrow(true); // a run in flight on another thread
            binding.close();
            assertThat(OrtApi.LIVE_IO_BINDINGS.get()).as("still bound while the run is in flight").isEqualTo(before + 1);
            assertThatThrownBy(binding::run).isInstanceOf(IllegalStateException.class).hasMessageContaining("was closed");
            binding.lease.giveBack(); // the run ends
            assertThat(OrtApi.LIVE_IO_BINDINGS.get()).as("released at the run's end").isEqualTo(before);
            binding.close(); // again: nothing
            session.run(Map.of("x", xt), Map.of("y", yt)); // its output is free again
        }
    }

    @Test
    void aCloseWhileAnotherThreadRunsItEndsItsRunsAndReleasesOnce() throws Exception {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.unary("Neg", FLOAT), 1);
             OwnedHostTensor x = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3);
             OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.FLOAT32, 3);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             OrtCApiTensor yt = OrtCApiSession.tensor(y)) {
            long before = OrtApi.LIVE_IO_BINDINGS.get();
            OrtCApiBinding binding = session.bind(Map.of("x", xt), Map.of("y", yt));
            AtomicLong runs = new AtomicLong();
            AtomicReference<Throwable> ended = new AtomicReference<>();
            Thread runner = Thread.ofPlatform().start(() -> {
                try {
                    while (true) {
                        binding.run();
                        runs.incrementAndGet();
                    }
                } catch (Throwable e) {
                    ended.set(e);
                }
            });
            assertThat(Collect.until(() -> runs.get() >= 100, Duration.ofSeconds(60))).as("runs went on").isTrue();
            binding.close(); // while runs go on: the one in flight, if any, finishes, the next is refused
            runner.join(Duration.ofSeconds(60));
            assertThat(runner.isAlive()).isFalse();
            assertThat(ended.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("was closed");
            assertThat(OrtApi.LIVE_IO_BINDINGS.get()).isEqualTo(before);
            assertThat(HostMemory.elements(y).toArray(ValueLayout.JAVA_FLOAT)).containsExactly(-1, -2, -3);
        }
    }

    @Test
    void theBindingHoldsItsTensorsAndSessionUntilItIsReleased() {
        OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(FLOAT), 1);
        OwnedHostTensor x = OwnedHostTensor.copyOf(new float[] {4, 5}, 2);
        OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2);
        OrtCApiTensor xt = OrtCApiSession.tensor(x);
        OrtCApiTensor yt = OrtCApiSession.tensor(y);
        MemorySegment ys = HostMemory.elements(y);
        x.close();
        y.close();
        OrtCApiBinding binding = session.bind(Map.of("x", xt), Map.of("y", yt));
        xt.close();
        yt.close();
        binding.run(); // the binding holds the closed tensors, and through them the memory
        assertThat(ys.toArray(ValueLayout.JAVA_FLOAT)).containsExactly(4, 5);
        assertThat(OrtApi.LIVE_VALUES.get()).isEqualTo(values + 2);
        session.close();
        assertThat(OrtApi.LIVE_SESSIONS.get()).as("the binding refers to the session").isEqualTo(sessions + 1);
        assertThatThrownBy(binding::run).as("but a closed session runs no more").isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("was closed");
        binding.close(); // the binding, then the values and their memory, then the session
        assertThat(OrtApi.LIVE_VALUES.get()).isEqualTo(values);
        assertThat(OrtApi.LIVE_SESSIONS.get()).isEqualTo(sessions);
    }

    @Test
    void aBoundOutputIsTheBindingsAloneAndOneRunOfABindingAtATime() {
        try (OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(FLOAT), 1);
             OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2);
             OwnedHostTensor y = OwnedHostTensor.allocate(DLDataType.FLOAT32, 2);
             OrtCApiTensor xt = OrtCApiSession.tensor(x);
             OrtCApiTensor yt = OrtCApiSession.tensor(y);
             OrtCApiBinding binding = session.bind(Map.of("x", xt), Map.of("y", yt))) {
            long made = OrtApi.LIVE_IO_BINDINGS.get();
            assertThatThrownBy(() -> session.bind(Map.of("x", xt), Map.of("y", yt))).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("pinned output of another run");
            assertThat(OrtApi.LIVE_IO_BINDINGS.get()).as("refused before a binding was made").isEqualTo(made);
            assertThatThrownBy(() -> session.run(Map.of("x", xt), Map.of("y", yt))).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("pinned output of another run");
            assertThatThrownBy(() -> session.run(Map.of("x", yt), Map.of("y", xt))).as("nor read while runs write it")
                    .isInstanceOf(IllegalStateException.class);
            binding.lease.borrow(true); // a run of the binding in flight
            try {
                assertThatThrownBy(binding::run).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("is in a run of its own on another thread");
            } finally {
                binding.lease.giveBack();
            }
            assertThatThrownBy(() -> session.bind(Map.of(), Map.of("y", yt))).hasMessageContaining("needs the inputs [x]");
        }
    }
}
