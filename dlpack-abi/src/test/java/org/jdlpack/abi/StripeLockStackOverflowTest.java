package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.plumbing.Ledger;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The stripe locks of the export registry and the ledger on a thread that runs out of stack. A
 * deleter upcall may run with little stack left (DeleterUpcallLimitsTest), and any call can then
 * throw {@link StackOverflowError}, including the call that gives a stripe's lock back. A lock left
 * held made {@link DLPackRuntime#release()}'s flush, {@link DLPackStats}' counts and every later
 * ledger entry on that stripe spin for ever; a bucket lock of {@link OwnedPointers} left held made
 * every later import of an address in that bucket spin.
 *
 * <p>The child's worker recurses until the stack overflows and, on the way back up, exports, calls
 * the deleter and opens and settles a ledger entry once at every depth, so that each of them runs
 * out of stack at every point of its path, the lock's give-back included. Then another thread
 * flushes the registry and counts the ledger's entries, which take every stripe's lock, and the
 * worker opens one more entry on its own stripe: all must finish. Interpreted ({@code -Xint}, as
 * code runs before the JIT compiles it) and with the JIT ({@code -Xmixed}, the default). Before
 * the fix the run with the JIT hung in the sweep (the worker's ledger stripe held), in both runs;
 * the interpreted run passed, its overflows coming before the give-back.
 */
class StripeLockStackOverflowTest {

    /** How long each of the child's steps may take before it reports a lock stuck; a healthy run takes well under a second. */
    private static final long STUCK_MILLIS = 60_000;

    private static final class Probe extends Ledger.Entry {
        Probe(Object watched) {
            super(watched);
            open();
        }

        void end() {
            settle();
        }

        @Override
        protected void forgotten() {
        }

        @Override
        protected String describe() {
            return "probe";
        }
    }

    private static ExportOwner owner;
    private static TensorSpec spec;
    private static final Object WATCHED = new Object();
    private static int overflows;
    /** Addresses claimed so far, one new one per claim: an overflow may leave a claim behind, which must not refuse the next. */
    private static long claims;

    /** Child JVM: the sweep, then the checks; prints one RESULT line. */
    public static void main(String[] args) throws InterruptedException {
        Arena arena = Arena.ofShared();
        owner = ExportOwner.of(arena, () -> { });
        spec = TensorSpec.of(arena.allocate(64), DLDataType.FLOAT32, 4, 4);
        operations(); // once with room: every class on the path is loaded
        String[] step = {"sweep"};
        Thread worker = Thread.ofPlatform().daemon().stackSize(512 * 1024).unstarted(() -> {
            sweep();
            step[0] = "the worker's own stripe";
            operations(); // the worker's own stripes, with room again
            step[0] = "ExportRegistry.flush";
        });
        worker.start();
        worker.join(STUCK_MILLIS);
        if (!worker.isAlive()) {
            Thread checks = Thread.ofPlatform().daemon().start(() -> {
                ExportRegistry.flush();
                step[0] = "Ledger.openEntries";
                Ledger.openEntries();
                step[0] = "done";
            });
            checks.join(STUCK_MILLIS);
            if (!checks.isAlive()) {
                Thread claimsCheck = Thread.ofPlatform().daemon().start(() -> {
                    step[0] = "OwnedPointers.claim";
                    for (long n = 0; n <= claims; n++) { // every bucket the sweep's claims locked
                        try {
                            OwnedPointers.drop(claimed(n), OwnedPointers.claim(ManagedTensorKind.VERSIONED, claimed(n)));
                        } catch (IllegalStateException leftByAnOverflow) {
                            // claimed and never dropped: the overflow came between the two
                        }
                    }
                    step[0] = "done";
                });
                claimsCheck.join(STUCK_MILLIS);
            }
        }
        System.out.println("RESULT stuck in: " + step[0] + ", overflows seen: " + (overflows > 0));
        Runtime.getRuntime().halt(0); // a thread spinning on a stuck lock must not keep the child alive
    }

    private static void sweep() {
        try {
            sweep();
        } catch (StackOverflowError deepest) {
            overflows++;
        }
        operations();
    }

    /** {@return the {@code n}th claimed address: 16-byte aligned, as malloc's} */
    private static long claimed(long n) {
        return 0x7000_0000_0000L + 16 * n;
    }

    /**
     * An export and its deleter call (two registry locks), a ledger entry (two ledger locks), and
     * a claim of a new address, refused once as already owned, then dropped (three locks of one
     * bucket of {@link OwnedPointers}; buckets that fill up spill, and their drops lock again).
     */
    private static void operations() {
        try {
            MemorySegment pointer = owner.exportPointer(spec, ExportOptions.VERSIONED);
            ExportDeleterUpcalls.delete(ManagedTensorKind.VERSIONED, pointer.address());
        } catch (StackOverflowError e) {
            overflows++;
        }
        try {
            new Probe(WATCHED).end();
        } catch (StackOverflowError e) {
            overflows++;
        }
        try {
            long address = claimed(++claims);
            int ticket = OwnedPointers.claim(ManagedTensorKind.VERSIONED, address);
            try {
                OwnedPointers.claim(ManagedTensorKind.VERSIONED, address);
            } catch (IllegalStateException alreadyOwned) {
                // the message's making runs inside the bucket's lock
            }
            OwnedPointers.drop(address, ticket);
        } catch (StackOverflowError e) {
            overflows++;
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"-Xint", "-Xmixed"})
    void aStackOverflowInsideAStripesLockNeverLeavesTheLockHeld(String mode) {
        ChildJvm.Outcome outcome = ChildJvm.create().options(mode).timeoutSeconds(300).run(StripeLockStackOverflowTest.class);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output()).isEqualTo("RESULT stuck in: done, overflows seen: true");
    }
}
