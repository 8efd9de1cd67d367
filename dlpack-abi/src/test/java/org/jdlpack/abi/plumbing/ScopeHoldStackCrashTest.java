package org.jdlpack.abi.plumbing;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.testsupport.ChildJvm;
import org.junit.jupiter.api.Test;

/**
 * A hold entered with the stack nearly full: the thread must get its StackOverflowError in Java,
 * never inside the comparator upcall, where it would end the JVM (found by review: a server
 * running ONNX Runtime over pooled tensors at the bottom of a deep recursion died with exit 134).
 * Runs in a child JVM with a small stack, holds at every level of a recursion down to the
 * stack's end, and nested holds down to it.
 */
class ScopeHoldStackCrashTest {

    private static MemorySegment segment;
    private static int holds;

    private static void holdAtEveryLevel() {
        holds++;
        try {
            ScopeHold.during(new MemorySegment[] {segment, segment, segment}, () -> { }, i -> new IllegalStateException("closed " + i));
        } catch (StackOverflowError expected) {
            // the point: thrown in Java
        }
        holdAtEveryLevel();
    }

    private static void nestedHolds() {
        holds++;
        ScopeHold.during(new MemorySegment[] {segment}, ScopeHoldStackCrashTest::nestedHolds, i -> new IllegalStateException("closed " + i));
    }

    public static void main(String[] args) {
        try (Arena arena = Arena.ofShared()) {
            segment = arena.allocate(64);
            int overflows = 0;
            for (int round = 0; round < 20; round++) {
                holds = 0;
                try {
                    if (round % 2 == 0) {
                        holdAtEveryLevel();
                    } else {
                        nestedHolds();
                    }
                } catch (StackOverflowError e) {
                    overflows++;
                }
            }
            System.out.println("RESULT overflows=" + overflows);
        }
    }

    @Test
    void aHoldNearTheEndOfTheStackThrowsInJava() {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Xss512k").timeoutSeconds(120).run(ScopeHoldStackCrashTest.class);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output()).isEqualTo("RESULT overflows=20");
    }
}
