package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;
import org.junit.jupiter.api.Test;

/**
 * Our deleter called with something that is not a live export of ours is counted, logged and
 * ignored: it frees nothing and releases nothing. (Not under NothingLeftBehind, which forbids
 * bogus calls.)
 */
class BogusDeleterCallTest {

    private static final CPeer PEER = CPeer.get();

    @Test
    void bogusSelfPointersAreIgnoredAndCounted() {
        long before = DLPackStats.bogusDeleterCalls();
        AtomicInteger released = new AtomicInteger();
        try (Arena arena = Arena.ofShared()) {
            for (ManagedTensorKind kind : ManagedTensorKind.values()) {
                boolean legacy = kind == ManagedTensorKind.LEGACY;
                ExportOwner owner = ExportOwner.of(released::incrementAndGet);
                MemorySegment ours = owner.export(TensorSpec.of(arena.allocate(8), DLDataType.INT32, 2), ExportOptions.of(kind)).consume();
                owner.close();

                PEER.callDeleterOf(ours, legacy, MemorySegment.NULL);
                CPeer.Produced foreign = PEER.make(legacy ? PeerTensor.legacy() : PeerTensor.versioned());
                PEER.callDeleterOf(ours, legacy, foreign.pointer());
                assertThat(released).as("nothing released by bogus calls").hasValue(legacy ? 1 : 0);
                assertThat(DLPackStats.liveExports()).isEqualTo(1);

                PEER.delete(ours, legacy);
            }
        }
        assertThat(released).hasValue(2);
        assertThat(DLPackStats.bogusDeleterCalls()).isEqualTo(before + 4);
        assertThat(DLPackStats.liveExports()).isZero();
    }
}
