package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;

import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.HostTensorPool;
import org.jdlpack.cpu.OwnedHostTensor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Tensors that wrap memory they do not own ({@link OwnedHostTensor#wrap}): the bridge's hold (an
 * export) keeps the tensor's references up, but the caller may still close the wrapped segment's
 * arena. A run checks the segment first and refuses with an exception naming the input or output,
 * before ONNX Runtime reads or writes anything, and leaves the rest usable. (Closed during a run:
 * WrappedMemoryCrashTest, in a child JVM.)
 */
@ExtendWith(NothingLeftBehind.class)
class WrappedTensorTest {

    private static final float[] X = {1, 2, 3, 4, 5, 6, 7, 8};

    private static OrtSession tiny;
    private static OrtBridge ort;

    @BeforeAll
    static void session() throws OrtException {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        tiny = Models.session(env, "tiny.onnx");
        ort = OrtBridge.of(env);
    }

    @AfterAll
    static void closeSession() throws OrtException {
        tiny.close();
    }

    @Test
    void aWrappedInputWhoseArenaClosedIsRefusedNamingIt() throws OrtException {
        Arena arena = Arena.ofShared();
        MemorySegment data = arena.allocateFrom(ValueLayout.JAVA_FLOAT, X);
        try (OwnedHostTensor wrapped = OwnedHostTensor.wrap(data, DLDataType.FLOAT32, new long[] {2, 4}, () -> { });
             OrtInput x = ort.input(wrapped);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            ort.run(tiny, Map.of("x", x), Map.of("y", y));
            assertThat(y.host().getFloat(3)).isEqualTo(Models.tiny(X)[3], within(1e-6f));
            arena.close();
            assertThatThrownBy(() -> ort.run(tiny, Map.of("x", x), Map.of("y", y))).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("OrtInput[").hasMessageContaining("from OwnedHostTensor[")
                    .hasMessageContaining("wraps a segment whose arena was closed").hasMessageContaining("ONNX Runtime did not read it");
            // The refused run gave everything back: the output runs again with another input.
            try (OwnedHostTensor source = OwnedHostTensor.copyOf(X, 2, 4); OrtInput fresh = ort.input(source)) {
                ort.run(tiny, Map.of("x", fresh), Map.of("y", y));
            }
        }
    }

    @Test
    void aWrappedOutputWhoseArenaClosedIsRefusedNamingIt() throws OrtException {
        Arena arena = Arena.ofShared();
        try (OwnedHostTensor wrapped = OwnedHostTensor.wrap(arena.allocate(24, 64), DLDataType.FLOAT32, new long[] {2, 3}, () -> { });
             OwnedHostTensor source = OwnedHostTensor.copyOf(X, 2, 4);
             OrtInput x = ort.input(source);
             OrtOutput y = ort.output(wrapped)) {
            ort.run(tiny, Map.of("x", x), Map.of("y", y));
            assertThat(wrapped.host().getFloat(3)).isEqualTo(Models.tiny(X)[3], within(1e-6f));
            arena.close();
            assertThatThrownBy(() -> ort.run(tiny, Map.of("x", x), Map.of("y", y))).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("OrtOutput[").hasMessageContaining("wraps a segment whose arena was closed")
                    .hasMessageContaining("ONNX Runtime wrote nothing");
            assertThat(x.isOpen()).isTrue();
        }
    }

    @Test
    void aWrappedTensorWhoseArenaIsClosedAlreadyIsRefusedAndNothingIsTaken() {
        Arena arena = Arena.ofShared();
        try (OwnedHostTensor wrapped = OwnedHostTensor.wrap(arena.allocate(32, 64), DLDataType.FLOAT32, new long[] {2, 4}, () -> { })) {
            arena.close();
            assertThatThrownBy(() -> ort.input(wrapped)).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("OwnedHostTensor[").hasMessageContaining("cannot be an input")
                    .hasMessageContaining("arena was closed");
            assertThatThrownBy(() -> ort.output(wrapped)).hasMessageContaining("cannot be an output");
            assertThat(wrapped.references()).as("nothing taken").isEqualTo(1);
        }
    }

    @Test
    void onlyWrappedMemoryIsHeldDuringARun() throws OrtException {
        Arena arena = Arena.ofShared();
        try (OwnedHostTensor wrapped = OwnedHostTensor.wrap(arena.allocateFrom(ValueLayout.JAVA_FLOAT, X), DLDataType.FLOAT32,
                new long[] {2, 4}, arena::close); // this one's release closes its arena: it owns the memory after all
             OwnedHostTensor allocated = OwnedHostTensor.copyOf(X, 2, 4);
             OrtInput fromWrapped = ort.input(wrapped);
             OrtInput fromAllocated = ort.input(allocated);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            assertThat(fromWrapped.memoryToHold()).isNotNull();
            assertThat(fromAllocated.memoryToHold()).as("its own references keep allocated memory alive").isNull();
            assertThat(y.memoryToHold()).isNull();
            ort.run(tiny, Map.of("x", fromWrapped), Map.of("y", y));
            ort.run(tiny, Map.of("x", fromAllocated), Map.of("y", y));
        }
    }

    /**
     * A pooled tensor's block is freed or reused only after its release, which the input's
     * reference delays: so a run needs no scope hold for it, and closing the tensor and the pool
     * while the input lives neither frees the block nor hands it out again.
     */
    @Test
    void aPooledTensorNeedsNoHoldItsInputKeepsTheBlock() throws OrtException {
        HostTensorPool pool = HostTensorPool.create(1 << 20);
        OwnedHostTensor x = pool.take(DLDataType.FLOAT32, 2, 4);
        x.host().copyFrom(X);
        MemorySegment data = x.spec().data();
        try (OrtInput in = ort.input(x);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            assertThat(in.memoryToHold()).as("only release frees a pooled block").isNull();
            try (OwnedHostTensor logits = pool.take(DLDataType.FLOAT32, 2, 3);
                 OrtOutput pooledOut = ort.output(logits)) {
                assertThat(pooledOut.memoryToHold()).as("an output over a pooled block").isNull();
            }
            x.close();
            try (OwnedHostTensor other = pool.take(DLDataType.FLOAT32, 2, 4)) {
                assertThat(other.spec().data().address()).as("the input still holds the block").isNotEqualTo(data.address());
            }
            pool.close();
            assertThat(data.scope().isAlive()).as("the closed pool's arena waits for the input").isTrue();
            ort.run(tiny, Map.of("x", in), Map.of("y", y));
            assertThat(y.host().getFloat(3)).as("the run read the block's values").isEqualTo(Models.tiny(X)[3], within(1e-6f));
        }
        assertThat(data.scope().isAlive()).as("freed with the input, the pool's last reference").isFalse();
    }
}
