package org.jdlpack.python;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;

/**
 * C function pointers onto this module's private static upcall targets (the capsule destructor,
 * the deleter guard, the {@code _jdlpack_*} built-ins). Each stub lives as long as the process,
 * as Python and foreign producers keep such pointers without telling us when they stop.
 *
 * <p>Thread safety: stateless.
 */
@SuppressWarnings("restricted")
final class UpcallStubs {

    private UpcallStubs() {
    }

    /**
     * {@return a stub for the static method {@code name} of {@code lookup}'s class, whose Java type
     * is {@code descriptor}'s}
     *
     * @throws IllegalStateException if there is no such method
     */
    static MemorySegment of(MethodHandles.Lookup lookup, String name, FunctionDescriptor descriptor) {
        try {
            return Linker.nativeLinker().upcallStub(lookup.findStatic(lookup.lookupClass(), name, descriptor.toMethodType()),
                    descriptor, Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("no upcall target " + name + " in " + lookup.lookupClass(), e);
        }
    }
}
