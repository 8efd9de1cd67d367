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
 * Tensors that wrap memory they do not own ({@link OwnedHostTensor#wrap}): no reference of the
 * bridge (a retain keeps the tensor's count up) can stop the caller from closing the wrapped
 * segment's arena, so ONNX Runtime never reads or writes such memory in place. An input is copied
 * once, through the FFM runtime's checks; an output, which ONNX Runtime must write in place, is
 * refused, naming what to pin instead. Before, each run checked the segment and held its scope
 * inside a libc {@code bsearch} comparator upcall (ScopeHold). (An arena closed while inputs are
 * made and runs go on: WrappedMemoryCrashTest, in a child JVM.)
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
    void aWrappedInputIsCopiedOnceSoItsArenaMayCloseAnyTime() throws OrtException {
        Arena arena = Arena.ofShared();
        MemorySegment data = arena.allocateFrom(ValueLayout.JAVA_FLOAT, X);
        try (OwnedHostTensor wrapped = OwnedHostTensor.wrap(data, DLDataType.FLOAT32, new long[] {2, 4}, () -> { });
             OrtInput x = ort.input(wrapped);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            assertThat(x.isCopy()).as("memory the tensor does not own is not read in place").isTrue();
            assertThat(x.copyReason()).get().asString().contains("wraps memory it does not own");
            assertThat(x.dataAddress()).isNotEqualTo(data.address());
            assertThat(wrapped.references()).as("the copy holds nothing of the tensor").isEqualTo(1);
            arena.close(); // the caller frees its memory: ONNX Runtime reads the copy
            ort.run(tiny, Map.of("x", x), Map.of("y", y));
            assertThat(y.host().getFloat(3)).isEqualTo(Models.tiny(X)[3], within(1e-6f));
        }
    }

    @Test
    void aWrappedOutputIsRefusedNamingWhatToPinInstead() {
        try (Arena arena = Arena.ofShared();
             OwnedHostTensor wrapped = OwnedHostTensor.wrap(arena.allocate(24, 64), DLDataType.FLOAT32, new long[] {2, 3}, () -> { })) {
            assertThatThrownBy(() -> ort.output(wrapped)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("OwnedHostTensor[").hasMessageContaining("cannot be an output")
                    .hasMessageContaining("wraps memory it does not own").hasMessageContaining("OrtBridge.allocateOutput");
            assertThat(wrapped.references()).as("nothing taken").isEqualTo(1);
        }
    }

    @Test
    void aZeroCopyBridgeRefusesAWrappedInput() {
        try (Arena arena = Arena.ofShared();
             OwnedHostTensor wrapped = OwnedHostTensor.wrap(arena.allocate(32, 64), DLDataType.FLOAT32, new long[] {2, 4}, () -> { })) {
            assertThatThrownBy(() -> ort.zeroCopyOnly().input(wrapped)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("zero-copy input refused for OwnedHostTensor[").hasMessageContaining("wraps memory it does not own");
            assertThat(wrapped.references()).as("nothing taken").isEqualTo(1);
        }
    }

    @Test
    void aClosedTensorIsRefusedAlsoWhereItsValuesWouldBeCopied() {
        try (Arena arena = Arena.ofShared()) {
            OwnedHostTensor wrapped = OwnedHostTensor.wrap(arena.allocate(32, 64), DLDataType.FLOAT32, new long[] {2, 4}, () -> { });
            OwnedHostTensor held = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4, 2);
            OwnedHostTensor strided = OwnedHostTensor.wrap(org.jdlpack.abi.TensorSpec.builder(held.host().segment(),
                    org.jdlpack.abi.TensorLayout.of(DLDataType.FLOAT32, new long[] {2, 4}, new long[] {1, 2}, 0, 0)).build(), () -> { });
            wrapped.close();
            strided.close();
            // Before: both were copied, as if still the user's to share.
            assertThatThrownBy(() -> ort.input(wrapped)).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("OwnedHostTensor[").hasMessageContaining("was closed");
            assertThatThrownBy(() -> ort.input(strided)).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("OwnedHostTensor[").hasMessageContaining("was closed");
            held.close();
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
    void onlyMemoryATensorOwnsIsReadInPlace() throws OrtException {
        Arena arena = Arena.ofShared();
        try (OwnedHostTensor wrapped = OwnedHostTensor.wrap(arena.allocateFrom(ValueLayout.JAVA_FLOAT, X), DLDataType.FLOAT32,
                new long[] {2, 4}, arena::close); // its release closes the arena, but the caller could close it first
             OwnedHostTensor allocated = OwnedHostTensor.copyOf(X, 2, 4);
             OwnedHostTensor allocatedRows = allocated.rows(0, 2);
             OrtInput fromWrapped = ort.input(wrapped);
             OrtInput fromAllocated = ort.input(allocated);
             OrtInput fromRows = ort.input(allocatedRows);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            assertThat(fromWrapped.isCopy()).isTrue();
            assertThat(fromAllocated.isCopy()).as("its own references keep allocated memory alive").isFalse();
            assertThat(fromAllocated.dataAddress()).isEqualTo(allocated.host().segment().address());
            assertThat(fromRows.isCopy()).as("rows of allocated memory are held by their retain").isFalse();
            ort.run(tiny, Map.of("x", fromWrapped), Map.of("y", y));
            ort.run(tiny, Map.of("x", fromAllocated), Map.of("y", y));
            assertThat(y.host().getFloat(3)).isEqualTo(Models.tiny(X)[3], within(1e-6f));
        }
    }

    /**
     * A pooled tensor's block is freed or reused only after its release, which the input's
     * retain delays: so it is read in place, and closing the tensor and the pool
     * while the input lives neither frees the block nor hands it out again.
     */
    @Test
    void aPooledTensorIsReadInPlaceItsInputKeepsTheBlock() throws OrtException {
        HostTensorPool pool = HostTensorPool.create(1 << 20);
        OwnedHostTensor x = pool.take(DLDataType.FLOAT32, 2, 4);
        x.host().copyFrom(X);
        MemorySegment data = x.spec().data();
        try (OrtInput in = ort.input(x);
             OrtOutput y = ort.allocateOutput(DLDataType.FLOAT32, 2, 3)) {
            assertThat(in.dataAddress()).as("only release frees a pooled block: read in place").isEqualTo(data.address());
            try (OwnedHostTensor logits = pool.take(DLDataType.FLOAT32, 2, 3);
                 OrtOutput pooledOut = ort.output(logits)) {
                assertThat(pooledOut.dataAddress()).as("an output over a pooled block").isEqualTo(logits.spec().data().address());
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
