package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An export that runs out of stack part way (an export made inside a deleter upcall or a deep
 * callback, where little stack is left) must leave nothing behind: no live registry slot that no
 * consumer will ever end, no reference on its owner. Before the fix, a {@link StackOverflowError}
 * thrown after the slot went live (in the leak tracking's record, or the deleter stubs' check)
 * left the slot live and the owner's reference held for ever: {@link DLPackStats#liveExports()}
 * counted an export nobody had, and {@link DLPackRuntime#release()} refused.
 *
 * <p>The child's worker recurses until the stack overflows and, on the way back up, exports once
 * at every depth, so that the export runs out of stack at every point of its path (32 times, each
 * starting a little deeper, since an export's path is longer than one frame of the sweep); every
 * export that returned is then ended by its deleter, with room. Interpreted and with the JIT, with leak
 * tracking off and on (on, the export records its creation site, which calls more). Before the
 * fix the runs with the JIT left references behind (1 to 23 in our runs; with tracking also up to 21 live
 * exports); the interpreted runs passed. A first fix that withdrew the export in a {@code catch}
 * but took the reference before writing the header still left references with the JIT: the
 * withdrawal itself ran out of stack. So the reference is taken last, right before the store that
 * publishes, and nothing that throws before it has one to give back.
 */
class ExportStackOverflowTest {

    private static ExportOwner owner;
    private static TensorSpec spec;
    private static final MemorySegment[] EXPORTED = new MemorySegment[1 << 16];
    private static int exports;
    private static int overflows;
    /** How many sweeps, each starting a little deeper. */
    private static final int SHIFTS = 32;

    /** Child JVM: the sweep, then the counts; prints one RESULT line. */
    public static void main(String[] args) throws InterruptedException {
        Arena arena = Arena.ofShared();
        owner = ExportOwner.of(arena, () -> { });
        spec = TensorSpec.of(arena.allocate(64), DLDataType.FLOAT32, 4, 4);
        ExportDeleterUpcalls.delete(ManagedTensorKind.VERSIONED, owner.exportPointer(spec, ExportOptions.VERSIONED).address());
        long referencesBefore = owner.references();
        boolean alive = false;
        for (int shift = 0; shift < SHIFTS && !alive; shift++) {
            int frames = shift;
            Thread worker = Thread.ofPlatform().daemon().stackSize(256 * 1024).start(() -> offset(frames));
            worker.join(60_000);
            alive = worker.isAlive();
            for (int n = 0; n < EXPORTED.length; n++) {
                if (EXPORTED[n] != null) {
                    ExportDeleterUpcalls.delete(ManagedTensorKind.VERSIONED, EXPORTED[n].address());
                    EXPORTED[n] = null;
                }
            }
        }
        System.out.println("RESULT alive: " + alive + ", overflows seen: " + (overflows > 0)
                + ", live exports: " + ExportRegistry.liveExports() + ", references: " + owner.references()
                + " (before: " + referencesBefore + ")");
        Runtime.getRuntime().halt(0);
    }

    /**
     * Starts the sweep {@code frames} frames deeper: a frame of this method is a few bytes larger
     * than one of {@link #sweep()}, so that the sweeps from successive shifts overflow the export at
     * different points of its path, not only at every sweep frame's size.
     */
    private static void offset(int frames) {
        if (frames > 0) {
            offset(frames - 1);
        } else {
            sweep();
        }
    }

    private static void sweep() {
        try {
            sweep();
        } catch (StackOverflowError deepest) {
            overflows++;
        }
        try {
            EXPORTED[exports++ & (EXPORTED.length - 1)] = owner.exportPointer(spec, ExportOptions.VERSIONED); // a store, no call
        } catch (StackOverflowError e) {
            overflows++;
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"-Xint", "-Xmixed", "-Xint -Dorg.jdlpack.leakTracking=true", "-Xmixed -Dorg.jdlpack.leakTracking=true"})
    void anExportThatRunsOutOfStackLeavesNoLiveSlotAndNoReference(String options) {
        ChildJvm.Outcome outcome = ChildJvm.create().options(options.split(" ")).timeoutSeconds(300)
                .run(ExportStackOverflowTest.class);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output())
                .isEqualTo("RESULT alive: false, overflows seen: true, live exports: 0, references: 1 (before: 1)");
    }
}
