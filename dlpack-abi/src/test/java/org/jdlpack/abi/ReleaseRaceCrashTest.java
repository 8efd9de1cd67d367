package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.Test;

/**
 * {@link DLPackRuntime#release()} racing exports on other threads. One thread exports from a fresh
 * owner, closes the owner and has C call the deleter, in a loop; another calls
 * {@code release()} in a loop. Between two iterations nothing is live, so some releases succeed.
 * When the release freed the deleter stubs while an export was being built, that export wrote a
 * freed stub into its struct and C's call crashed the JVM (SIGSEGV in upcall_stub_load_target,
 * within seconds), so the race runs in a child JVM. A switched-off stub would not crash but lose
 * the deleter: the child also counts that every owner was released.
 */
class ReleaseRaceCrashTest {

    /** Child JVM: races for {@code args[0]} milliseconds and prints one RESULT line. */
    public static void main(String[] args) throws InterruptedException {
        long millis = Long.parseLong(args[0]);
        CPeer peer = CPeer.get();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong exports = new AtomicLong();
        AtomicLong released = new AtomicLong();
        AtomicLong releases = new AtomicLong();
        AtomicLong refusals = new AtomicLong();
        Runnable exporter = () -> {
            while (!stop.get()) {
                Arena arena = Arena.ofShared();
                ExportOwner owner = ExportOwner.of(arena, () -> {
                    arena.close();
                    released.incrementAndGet();
                });
                MemorySegment data = arena.allocate(16);
                MemorySegment pointer = owner.export(TensorSpec.of(data, DLDataType.FLOAT32, 4)).consume();
                owner.close();
                exports.incrementAndGet();
                if (exports.get() % 64 == 0) {
                    peer.deleteOnNewThread(pointer, false); // now and then from a thread the JVM did not start
                } else {
                    peer.delete(pointer, false);
                }
            }
        };
        Thread[] exporters = {Thread.ofPlatform().start(exporter), Thread.ofPlatform().start(exporter)};
        Thread releaser = Thread.ofPlatform().start(() -> {
            while (!stop.get()) {
                try {
                    DLPackRuntime.release();
                    releases.incrementAndGet();
                } catch (IllegalStateException e) {
                    refusals.incrementAndGet();
                }
            }
        });
        Thread.sleep(millis);
        stop.set(true);
        for (Thread thread : exporters) {
            thread.join();
        }
        releaser.join();
        System.out.println("RESULT lost=" + (exports.get() - released.get()) + " live=" + DLPackStats.liveExports()
                + " bogus=" + DLPackStats.bogusDeleterCalls() + " failures=" + DLPackStats.deleterFailures());
        System.out.println("exports=" + exports + " releases=" + releases + " refusals=" + refusals);
        DLPackRuntime.release(); // and it still releases once nothing runs
    }

    @Test
    void exportsRacingReleasesNeitherCrashNorLoseADeleter() {
        ChildJvm.Outcome outcome = ChildJvm.create().timeoutSeconds(120).run(ReleaseRaceCrashTest.class, "5000");
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output()).isEqualTo("RESULT lost=0 live=0 bogus=0 failures=0");
        assertThat(outcome.output()).as("both sides ran").containsPattern("exports=[1-9]\\d* releases=[1-9]\\d* refusals=\\d+");
    }
}
