package org.jdlpack.abi.plumbing;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Loading and binding as both device call layers do it, against libc. */
class NativeLibraryTest {

    /** Stands in for a device module's exception. */
    private static final class ModuleException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ModuleException(String message) {
            super(message);
        }
    }

    @Test
    void theFirstCandidateThatOpensWinsAndAFunctionItLacksFailsAtTheCallWithItsMessage() throws Throwable {
        NativeLibrary libc = NativeLibrary.load(NativeLibraryTest.class, List.of("libjdlpack-no-such.so", "libc.so.6"),
                "no libc", ModuleException::new);
        assertThat(libc.name()).contains("libc.so.6");
        assertThat(libc.loadFailure()).isNull();
        libc.require();
        MethodHandle getpid = libc.bind("getpid", FunctionDescriptor.of(JAVA_INT), "libc has no getpid");
        assertThat((long) (int) getpid.invokeExact()).isEqualTo(ProcessHandle.current().pid());
        MethodHandle missing = libc.bind("jdlpack_no_such_function", FunctionDescriptor.of(JAVA_INT, JAVA_INT),
                "libc has no jdlpack_no_such_function");
        assertThatThrownBy(() -> {
            int ignored = (int) missing.invokeExact(7);
        }).isInstanceOf(ModuleException.class).hasMessage("libc has no jdlpack_no_such_function");
    }

    @Test
    void withoutALibraryEveryFunctionAndRequireFailWithTheLoadFailure() {
        NativeLibrary none = NativeLibrary.load(NativeLibraryTest.class, List.of("libjdlpack-no-such.so"), "install it",
                ModuleException::new);
        assertThat(none.name()).isEmpty();
        assertThat(none.loadFailure()).isEqualTo("install it");
        assertThatThrownBy(none::require).isInstanceOf(ModuleException.class).hasMessage("install it");
        MethodHandle function = none.bind("getpid", FunctionDescriptor.of(JAVA_INT), "unused");
        assertThat(function.type()).isEqualTo(FunctionDescriptor.of(JAVA_INT).toMethodType());
        assertThatThrownBy(() -> {
            int ignored = (int) function.invokeExact();
        }).isInstanceOf(ModuleException.class).hasMessage("install it");
    }
}
