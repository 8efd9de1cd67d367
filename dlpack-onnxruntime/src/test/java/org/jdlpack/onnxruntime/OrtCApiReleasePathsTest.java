package org.jdlpack.onnxruntime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.DLPackStats;
import org.jdlpack.abi.testing.Collect;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.internal.HostMemory;
import org.jdlpack.testsupport.ChildJvm;
import org.jdlpack.testsupport.Race;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The C route's release paths where something throws: every hold is given back and every
 * {@code OrtValue} released exactly once ({@link OrtApi}'s counters), whatever throws where. No
 * real part throws there today (ONNX Runtime's releases do not fail, an export owner's release
 * swallows its failures), so each failure is played by a {@link Lease} whose {@link Release}
 * throws, or by a tensor maker that throws after making the tensor's owner; the sessions, values
 * and holds around it are real.
 */
@ExtendWith({NothingLeftBehind.class, NoOrtObjectLeft.class})
class OrtCApiReleasePathsTest {

    private static final int FLOAT = 1;

    /** A lease held by a run and closed meanwhile, whose release (at the give-back) throws {@code message}. */
    private static Lease failing(String message, AtomicLong runs) {
        Object owner = new Object() {
            @Override
            public String toString() {
                return "the lease failing with " + message;
            }
        };
        Lease lease = new Lease(true, owner, new Release(owner, owner::toString, () -> {
            runs.incrementAndGet();
            throw new IllegalStateException(message);
        }));
        lease.borrow(false);
        lease.close(); // deferred to the give-back: a run holds it
        return lease;
    }

    @Test
    void aBindingsReleaseGivesBackEveryHoldThoughOneOfTheirReleasesThrows() {
        long sessions = OrtApi.LIVE_SESSIONS.get();
        long values = OrtApi.LIVE_VALUES.get();
        AtomicLong failed = new AtomicLong();
        try (OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4)) {
            OrtCApiSession session = OrtCApiSession.open(OnnxModelBytes.identity(FLOAT), 1);
            OrtCApiTensor xt = OrtCApiSession.tensor(x);
            OrtCApiTensor yt = OrtCApiSession.tensor(x);
            // What a binding holds, in the order it takes them, with a failing release among them.
            Lease[] held = {session.lease, xt.lease, failing("boom", failed), yt.lease};
            session.lease.borrow(false);
            xt.lease.borrow(false);
            yt.lease.borrow(true);
            session.close(); // each released at the give-back, the binding's release
            xt.close();
            yt.close();
            assertThat(OrtApi.LIVE_SESSIONS.get()).as("held").isEqualTo(sessions + 1);

            assertThatThrownBy(() -> OrtCApiBinding.release(0, held, held.length, null))
                    .isInstanceOf(IllegalStateException.class).hasMessage("boom");

            assertThat(failed).as("the failing release ran once").hasValue(1);
            assertThat(OrtApi.LIVE_VALUES.get()).as("both values released, the one given back before the failure and after")
                    .isEqualTo(values);
            assertThat(OrtApi.LIVE_SESSIONS.get()).as("the session, given back last, released").isEqualTo(sessions);
        }
    }

    @Test
    void aRunsGiveBackReachesEveryTensorAndThrowsTheRunsFailureFirstTheOthersSuppressed() {
        long values = OrtApi.LIVE_VALUES.get();
        AtomicLong failed = new AtomicLong();
        try (OwnedHostTensor x = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4)) {
            OrtCApiTensor first = OrtCApiSession.tensor(x);
            OrtCApiTensor last = OrtCApiSession.tensor(x);
            // Given back last first: "second", then the real tensor between, then "first".
            Lease[] leases = {first.lease, failing("first", failed), last.lease, failing("second", failed)};
            first.lease.borrow(false);
            last.lease.borrow(true);
            first.close();
            last.close();
            RuntimeException run = new IllegalStateException("the run failed");

            assertThatThrownBy(() -> Lease.giveBack(leases, leases.length, run)).isSameAs(run)
                    .satisfies(e -> assertThat(e.getSuppressed()).extracting(Throwable::getMessage).containsExactly("second", "first"));

            assertThat(failed).hasValue(2);
            assertThat(OrtApi.LIVE_VALUES.get()).as("every value released").isEqualTo(values);
        }
    }

    @Test
    void withoutAFailureOfItsOwnAGiveBackThrowsTheFirstReleaseFailure() {
        AtomicLong failed = new AtomicLong();
        Lease[] leases = {failing("first", failed), failing("second", failed)};
        assertThatThrownBy(() -> Lease.giveBack(leases, leases.length, null)).hasMessage("second")
                .satisfies(e -> assertThat(e.getSuppressed()).extracting(Throwable::getMessage).containsExactly("first"));
        assertThat(failed).hasValue(2);
        Lease.giveBack(leases, 0, null); // nothing borrowed, nothing failed: returns
    }

    @Test
    void theReleaseAFactoryAndItsOwnerShareReleasesTheValueOnceHoweverManyRaceToIt() throws InterruptedException {
        long released = OrtApi.VALUES_RELEASED.get();
        long values = OrtApi.LIVE_VALUES.get();
        try (Arena arena = Arena.ofShared()) {
            long value = OrtValues.over(arena.allocate(16, 8), new long[] {4}, FLOAT);
            Once release = new Once(() -> OrtApi.releaseValue(value)); // as a factory makes it for the owner and its cleanup
            Race.Outcome outcome = Race.run(8, release); // the owner's close, the safety net, the cleanup: all at once
            assertThat(outcome.won()).isEqualTo(8);
            release.runAfter(new IllegalStateException("a cleanup after the owner's release")); // nothing left to run
        }
        assertThat(OrtApi.VALUES_RELEASED.get() - released).as("ReleaseValue calls").isEqualTo(1);
        assertThat(OrtApi.LIVE_VALUES.get()).isEqualTo(values);
    }

    /**
     * Child JVM: a value over memory of its own, exported while the tensor maker throws after
     * making the tensor's owner, which it closes ({@code closed}) or drops for the safety net
     * ({@code dropped}). One RESULT line: the value's {@code ReleaseValue} calls. In a child,
     * because a second {@code ReleaseValue} frees the value twice (the process may abort).
     */
    public static void main(String[] args) throws InterruptedException {
        OrtApi.require();
        MemorySegment memory = Arena.global().allocate(16, 8);
        long value = OrtValues.over(memory, new long[] {4}, FLOAT);
        long released = OrtApi.VALUES_RELEASED.get();
        long leaks = DLPackStats.leaksReported();
        boolean closed = args[0].equals("closed");
        HostMemory.Owning maker = (data, dtype, shape, release) -> {
            OwnedHostTensor tensor = HostMemory.owning(data, dtype, shape, release);
            if (closed) {
                tensor.close(); // its owner's release ran: the value was released
            }
            throw new OutOfMemoryError("played: after the tensor's owner was made");
        };
        String thrown;
        try {
            OrtValues.exported(value, () -> "the output \"y\"", maker);
            thrown = "nothing";
        } catch (OutOfMemoryError e) {
            thrown = "OutOfMemoryError";
        }
        // A dropped owner is the safety net's: wait until it has run it (it reports the leak after the release).
        boolean settled = closed || Collect.until(() -> DLPackStats.leaksReported() > leaks, Duration.ofSeconds(60));
        System.out.println("RESULT thrown=" + thrown + " settled=" + settled + " releases=" + (OrtApi.VALUES_RELEASED.get() - released));
    }

    @ParameterizedTest
    @ValueSource(strings = {"closed", "dropped"})
    void anExportedValueIsReleasedOnceWhenMakingItsTensorThrowsAfterTheTensorsOwnerWasMade(String owner) {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Xmx256m").timeoutSeconds(120).run(OrtCApiReleasePathsTest.class, owner);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output()).isEqualTo("RESULT thrown=OutOfMemoryError settled=true releases=1");
    }
}
