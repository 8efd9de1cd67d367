package org.jdlpack.abi.plumbing;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.lang.reflect.UndeclaredThrowableException;

import org.junit.jupiter.api.Test;

/** The pieces the device modules' call layers share. */
class DowncallsTest {

    @Test
    void aFailingHandleHasTheDowncallsTypeAndThrowsAFreshExceptionAtEachCall() throws Throwable {
        MethodType type = MethodType.methodType(int.class, MemorySegment.class, long.class);
        int[] made = {0};
        MethodHandle missing = Downcalls.failing(type, () -> new IllegalStateException("no symbol clFoo (" + ++made[0] + ")"));
        assertThat(missing.type()).isEqualTo(type);
        assertThatThrownBy(() -> {
            int ignored = (int) missing.invokeExact(MemorySegment.NULL, 1L);
        }).hasMessage("no symbol clFoo (1)");
        assertThatThrownBy(() -> {
            int ignored = (int) missing.invokeExact(MemorySegment.NULL, 1L);
        }).hasMessage("no symbol clFoo (2)");
    }

    @Test
    void errorsPassThroughRuntimeExceptionsAreReturnedAndNothingIsWrappedAsIllegalState() {
        StackOverflowError overflow = new StackOverflowError();
        assertThatThrownBy(() -> Downcalls.rethrow(overflow)).isSameAs(overflow);
        IllegalStateException closed = new IllegalStateException("Already closed");
        assertThat(Downcalls.rethrow(closed)).isSameAs(closed);
        assertThat(Downcalls.rethrow(new IOException("impossible"))).isInstanceOf(UndeclaredThrowableException.class);
    }

    @Test
    void anOutParameterCallReturnsWhatTheFunctionWroteOnlyWhenItsStatusPasses() {
        Downcalls.StatusCheck check = (code, call) -> {
            if (code != 0) {
                throw new IllegalStateException(call + " failed: " + code);
            }
        };
        assertThat(Downcalls.out(JAVA_INT, "count", slot -> {
            slot.set(JAVA_INT, 0, -7);
            return 0;
        }, check)).isEqualTo(-7);
        assertThat(Downcalls.out(JAVA_LONG, "size", slot -> {
            slot.set(JAVA_LONG, 0, 1L << 40);
            return 0;
        }, check)).isEqualTo(1L << 40);
        assertThatThrownBy(() -> Downcalls.out(JAVA_INT, "count", slot -> 5, check)).isInstanceOf(IllegalStateException.class)
                .hasMessage("count failed: 5");
        StackOverflowError overflow = new StackOverflowError();
        assertThatThrownBy(() -> Downcalls.out(JAVA_INT, "count", slot -> {
            throw overflow;
        }, check)).isSameAs(overflow);
    }

    @Test
    void aBoundHandleSharesItsOwnersScopeAndAClosedOwnerSaysSoOnce() {
        Arena lifetime = Arena.ofShared();
        MemorySegment handle = Downcalls.bound(0x1234_5670L, lifetime.scope());
        assertThat(handle.address()).isEqualTo(0x1234_5670L);
        assertThat(handle.byteSize()).as("grants access to no byte").isZero();
        assertThat(Downcalls.requireAlive(handle, "Thing")).isSameAs(handle);
        Downcalls.close(lifetime, "Thing");
        assertThat(handle.scope().isAlive()).isFalse();
        assertThatThrownBy(() -> Downcalls.requireAlive(handle, "Thing")).isInstanceOf(IllegalStateException.class)
                .hasMessage("Thing is closed");
        assertThatThrownBy(() -> Downcalls.close(lifetime, "Thing")).isInstanceOf(IllegalStateException.class)
                .hasMessage("Thing already closed");
    }
}
