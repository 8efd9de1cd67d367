package org.jdlpack.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Pooled host tensors: blocks reused after the last reference (Java's or C's), freed only when the closed pool's last tensor goes. */
@ExtendWith(NothingLeftBehind.class)
class HostTensorPoolTest {

    private static final CPeer PEER = CPeer.get();

    @Test
    void aBlockIsReusedOnlyAfterItsTensorAndEveryExportAreDone() {
        try (HostTensorPool pool = HostTensorPool.create(1 << 20)) {
            long first;
            MemorySegment exported;
            try (OwnedHostTensor a = pool.take(DLDataType.FLOAT32, 4, 16)) {
                first = a.spec().data().address();
                assertThat(first % OwnedHostTensor.ALIGNMENT).isZero();
                assertThat(a.spec().data().byteSize()).isEqualTo(256);
                exported = a.export().consume();
            }
            // C still holds the export: the block is not handed out again.
            try (OwnedHostTensor b = pool.take(DLDataType.FLOAT32, 4, 16)) {
                assertThat(b.spec().data().address()).isNotEqualTo(first);
                assertThat(pool.tensorsOut()).isEqualTo(2);
            }
            PEER.fillF32(exported, false, 1, 1); // C writes the block it holds
            PEER.deleteOnNewThread(exported, false);
            assertThat(pool.tensorsOut()).isZero();
            try (OwnedHostTensor c = pool.take(DLDataType.INT32, 64)) {   // same size: a block that came back
                assertThat(List.of(c.spec().data().address())).containsAnyOf(first);
                assertThat(c.host().getLong(63)).isEqualTo(Float.floatToRawIntBits(64f)); // not zeroed: C's last values
            }
            assertThat(pool.pooledBytes()).isEqualTo(512);
        }
    }

    /**
     * A released block is the next taker's: a view kept from before the release must refuse every
     * access, not read (or write) the next request's data.
     */
    @Test
    void aViewOfAReleasedPooledTensorReadsNothing() throws Exception {
        try (HostTensorPool pool = HostTensorPool.create(1 << 20)) {
            OwnedHostTensor mine = pool.take(DLDataType.FLOAT32, 4);
            HostTensorView stale = mine.host();
            HostTensorView staleRows = stale.rows(1, 3);
            MemorySegment staleSegment = stale.segment();
            TensorSpec staleSpec = mine.spec();
            HostTensorView staleSpecView = HostTensorView.of(staleSpec);
            long mineAddress = staleSpec.data().address();
            mine.close();
            try (OwnedHostTensor theirs = pool.take(DLDataType.FLOAT32, 4)) {
                assertThat(theirs.layout().dtype()).isEqualTo(DLDataType.FLOAT32);
                assertThat(theirs.spec().data().address()).as("the same block, handed on").isEqualTo(mineAddress);
                // Before the spec was scoped: a view of the spec, and the spec's segment, read the next taker's data.
                assertThatThrownBy(() -> staleSpec.data().get(java.lang.foreign.ValueLayout.JAVA_FLOAT, 0))
                        .as("the spec's segment, taken before the release").isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> staleSpecView.getFloat(0)).as("a view made from the spec").isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(mine::spec).as("the spec asked for after the release").isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("released");
                theirs.host().setFloat(0, 42f);
                theirs.host().setFloat(1, 43f);
                // Before: stale.getFloat(0) returned 42.0.
                assertThatThrownBy(() -> stale.getFloat(0)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("was released").hasMessageContaining("OwnedHostTensor[");
                assertThatThrownBy(() -> stale.getDouble(0)).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> stale.setFloat(0, 1f)).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> stale.copyTo(new float[4])).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> stale.copyFrom(new float[4])).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> staleRows.getFloat(0)).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> stale.rows(0, 1)).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> stale.segment()).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> staleSegment.get(java.lang.foreign.ValueLayout.JAVA_FLOAT, 0))
                        .as("a segment taken before the release").isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> TensorStreams.write(stale, new java.io.ByteArrayOutputStream(), new byte[16]))
                        .isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> TensorStreams.readFully(new java.io.ByteArrayInputStream(new byte[16]), stale, new byte[16]))
                        .isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> stale.copyTo(theirs.host())).isInstanceOf(IllegalStateException.class);
                assertThatThrownBy(() -> theirs.host().copyTo(stale)).isInstanceOf(IllegalStateException.class);
                assertThat(theirs.host().getFloat(0)).as("the new taker's data, untouched").isEqualTo(42f);
                assertThat(theirs.host().getFloat(1)).isEqualTo(43f);
            }
        }
    }

    /** The same for wrapped memory: after its release the memory is no longer the tensor's, whatever frees it. */
    @Test
    void aViewOfAReleasedWrappedTensorReadsNothing() {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
            MemorySegment memory = arena.allocate(16);
            OwnedHostTensor wrapped = OwnedHostTensor.wrap(memory, DLDataType.FLOAT32, new long[] {4}, () -> { });
            HostTensorView stale = wrapped.host();
            wrapped.close();
            assertThatThrownBy(() -> stale.getFloat(0)).isInstanceOf(IllegalStateException.class).hasMessageContaining("was released");
        }
    }

    /** A take whose allocation fails gives its reservation back: the pool still pools. */
    @Test
    void aTakeThatCannotAllocateLeavesThePoolAsItWas() throws Exception {
        // A 1 TiB allocation fails unless the kernel overcommits without limit (then it would be zeroed: skip).
        org.junit.jupiter.api.Assumptions.assumeFalse(java.nio.file.Files.readString(java.nio.file.Path.of(
                "/proc/sys/vm/overcommit_memory")).trim().equals("1"), "vm.overcommit_memory=1 would grant 1 TiB");
        try (HostTensorPool pool = HostTensorPool.create(1L << 40)) {
            assertThatThrownBy(() -> pool.take(DLDataType.INT8, 1L << 40)).isInstanceOf(OutOfMemoryError.class);
            // Before: 1 TiB reserved for nothing, and every later take got an arena of its own.
            assertThat(pool.pooledBytes()).isZero();
            assertThat(pool.tensorsOut()).isZero();
            long first;
            try (OwnedHostTensor small = pool.take(DLDataType.UINT8, 256)) {
                first = small.spec().data().address();
            }
            assertThat(pool.pooledBytes()).isEqualTo(256);
            try (OwnedHostTensor again = pool.take(DLDataType.UINT8, 256)) {
                assertThat(again.spec().data().address()).as("the block reused").isEqualTo(first);
            }
        }
    }

    /** A pooled block is freed only by its tensor's release, so it is the tensor's own memory, not wrapped memory. */
    @Test
    void pooledMemoryIsNotWrappedMemory() {
        try (HostTensorPool pool = HostTensorPool.create(4096);
             OwnedHostTensor cached = pool.take(DLDataType.UINT8, 4096);
             OwnedHostTensor own = pool.take(DLDataType.UINT8, 4096);
             OwnedHostTensor rows = cached.rows(0, 16);
             java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
             OwnedHostTensor wrapped = OwnedHostTensor.wrap(arena.allocate(16), DLDataType.UINT8, new long[] {16}, () -> { })) {
            assertThat(cached.ownsMemory()).as("a cached block").isTrue();
            assertThat(own.ownsMemory()).as("a block over the cache, in its own arena").isTrue();
            assertThat(rows.ownsMemory()).as("rows of a pooled tensor").isTrue();
            assertThat(wrapped.ownsMemory()).as("the caller's memory").isFalse();
            try (OwnedHostTensor wrappedRows = wrapped.rows(0, 4)) {
                assertThat(wrappedRows.ownsMemory()).as("rows of the caller's memory").isFalse();
            }
        }
    }

    @Test
    void overTheCacheATensorGetsAnArenaOfItsOwn() {
        try (HostTensorPool pool = HostTensorPool.create(4096)) {
            try (OwnedHostTensor cached = pool.take(DLDataType.UINT8, 4096);
                 OwnedHostTensor own = pool.take(DLDataType.UINT8, 4096)) {
                assertThat(pool.pooledBytes()).isEqualTo(4096);
                own.host().segment().fill((byte) 7);
                assertThat(own.host().getLong(4095)).isEqualTo(7);
                assertThat(cached.spec().data().address()).isNotEqualTo(own.spec().data().address());
            }
            assertThat(pool.tensorsOut()).isZero();
            try (OwnedHostTensor empty = pool.take(DLDataType.FLOAT32, 0, 16)) {
                assertThat(empty.spec().data().byteSize()).isZero();
            }
        }
    }

    @Test
    void closingThePoolWaitsForItsLastTensorAndRefusesTakes() {
        HostTensorPool pool = HostTensorPool.create(1 << 20);
        OwnedHostTensor open = pool.take(DLDataType.FLOAT32, 16);
        MemorySegment exported = open.export().consume();
        open.close();
        MemorySegment data = open.spec().data();
        pool.close();
        assertThat(pool.isClosed()).isTrue();
        assertThatThrownBy(() -> pool.take(DLDataType.FLOAT32, 16)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("was closed; it hands out nothing more");
        assertThatThrownBy(pool::close).isInstanceOf(IllegalStateException.class).hasMessageContaining("already closed");
        assertThat(data.scope().isAlive()).isTrue(); // C still reads it
        assertThat(PEER.sumF32(exported, false)).isZero(); // nothing wrote it: 16 zeros from a fresh block
        PEER.deleteOnNewThread(exported, false);
        assertThat(data.scope().isAlive()).isFalse(); // the pool's arena went with the last tensor
    }

    /** A pooled tensor Java forgets is the safety net's, as any OwnedHostTensor: its block comes back, the leak is counted. */
    @Test
    void aForgottenTensorsBlockComesBackAfterCollection() throws InterruptedException {
        long leaksBefore = DLPackStats.leaksReported();
        try (HostTensorPool pool = HostTensorPool.create(1 << 20)) {
            forget(pool);
            assertThat(pool.tensorsOut()).as("the slice is a tensor of its own, holding the pooled one").isEqualTo(1);
            // The safety net releases, then counts the report: under load the count can trail the release, so wait for both.
            assertThat(org.jdlpack.abi.testing.Collect.until(
                    () -> pool.tensorsOut() == 0 && DLPackStats.leaksReported() - leaksBefore >= 2, java.time.Duration.ofSeconds(30)))
                    .as("the forgotten tensor and its forgotten rows released after collection").isTrue();
            assertThat(pool.tensorsOut()).isZero();
            assertThat(DLPackStats.leaksReported() - leaksBefore).isGreaterThanOrEqualTo(2);
            try (OwnedHostTensor again = pool.take(DLDataType.FLOAT32, 4, 16)) {
                assertThat(again.spec().data().byteSize()).isEqualTo(256);
                assertThat(pool.pooledBytes()).as("the block was reused, not a new one made").isEqualTo(256);
            }
        }
    }

    private static void forget(HostTensorPool pool) {
        OwnedHostTensor forgotten = pool.take(DLDataType.FLOAT32, 4, 16);
        forgotten.rows(1, 3); // a slice, forgotten too: it holds the block until it is collected
    }

    @Test
    void refusesWhatItCannotHandOutWithTheFieldNamed() {
        assertThatThrownBy(() -> HostTensorPool.create(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cachedBytes is -1");
        try (HostTensorPool pool = HostTensorPool.create(1 << 20)) {
            assertThatThrownBy(() -> pool.take(DLDataType.FLOAT32, 2, -3)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> pool.take(DLDataType.FLOAT32, Long.MAX_VALUE / 2, 3)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> pool.take(DLDataType.FLOAT32, new long[300])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("300");
            assertThat(pool.tensorsOut()).isZero(); // the refused take holds nothing
        }
    }

    @Test
    void manyThreadsTakeAndGiveBackWithoutSharingABlock() throws Exception {
        try (HostTensorPool pool = HostTensorPool.create(1 << 20);
             ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int mark = t + 1;
                done.add(threads.submit(() -> {
                    int wrong = 0;
                    for (int i = 0; i < 2000; i++) {
                        try (OwnedHostTensor mine = pool.take(DLDataType.INT32, 1 + i % 100)) {
                            mine.host().segment().fill((byte) mark);
                            Thread.yield();
                            for (long k = 0; k < mine.host().layout().elementCount(); k++) {
                                wrong += mine.host().getLong(k) == mark * 0x01010101L ? 0 : 1;
                            }
                        }
                    }
                    return wrong;
                }));
            }
            for (Future<Integer> f : done) {
                assertThat(f.get()).isZero();
            }
            assertThat(pool.tensorsOut()).isZero();
            assertThat(pool.pooledBytes()).isLessThanOrEqualTo(8 * (256 + 512));
        }
        assertThat(DLPackStats.liveExportOwners()).isZero();
    }
}
