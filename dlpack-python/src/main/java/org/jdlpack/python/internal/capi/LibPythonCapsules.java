package org.jdlpack.python.internal.capi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import org.jdlpack.abi.plumbing.Downcalls;

/**
 * The libpython functions on {@code PyCapsule}s, the envelope a DLPack tensor, a Java tensor's
 * registration and the exchange API table travel in; see {@link LibPython}.
 */
public final class LibPythonCapsules {

    private static final MethodHandle CAPSULE_NEW = LibPython.bindLeaf("PyCapsule_New", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle CAPSULE_IS_VALID = LibPython.bind("PyCapsule_IsValid", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle CAPSULE_GET_POINTER = LibPython.bind("PyCapsule_GetPointer", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle CAPSULE_SET_NAME = LibPython.bind("PyCapsule_SetName", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle CAPSULE_GET_NAME = LibPython.bind("PyCapsule_GetName", FunctionDescriptor.of(ADDRESS, ADDRESS));
    /** The same function, as a leaf: only for a capsule known to be one, where it cannot fail (and so allocates nothing). */
    private static final MethodHandle OWN_CAPSULE_GET_NAME = LibPython.bindLeaf("PyCapsule_GetName", FunctionDescriptor.of(ADDRESS, ADDRESS));

    private static final MethodHandle CAPSULE_GET_DESTRUCTOR = LibPython.bind("PyCapsule_GetDestructor",
            FunctionDescriptor.of(ADDRESS, ADDRESS));

    private LibPythonCapsules() {
    }

    public static MemorySegment capsuleNew(MemorySegment pointer, MemorySegment name, MemorySegment destructor) {
        try {
            return (MemorySegment) CAPSULE_NEW.invokeExact(pointer, name, destructor);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return whether {@code object} is a capsule named {@code name} with a pointer; never sets an exception} */
    public static boolean capsuleIsValid(MemorySegment object, MemorySegment name) {
        try {
            return (int) CAPSULE_IS_VALID.invokeExact(object, name) != 0;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment capsuleGetPointer(MemorySegment capsule, MemorySegment name) {
        try {
            return (MemorySegment) CAPSULE_GET_POINTER.invokeExact(capsule, name);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static int capsuleSetName(MemorySegment capsule, MemorySegment name) {
        try {
            return (int) CAPSULE_SET_NAME.invokeExact(capsule, name);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the capsule's name pointer (NULL for a nameless capsule, or NULL with an exception set if not a capsule)} */
    public static MemorySegment capsuleGetName(MemorySegment capsule) {
        try {
            return (MemorySegment) CAPSULE_GET_NAME.invokeExact(capsule);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code PyCapsule_GetName} of a capsule this module made, which cannot fail: a leaf call. */
    public static MemorySegment ownCapsuleGetName(MemorySegment capsule) {
        try {
            return (MemorySegment) OWN_CAPSULE_GET_NAME.invokeExact(capsule);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the capsule's destructor, or NULL (with an exception set if it is not a capsule)} */
    public static MemorySegment capsuleGetDestructor(MemorySegment capsule) {
        try {
            return (MemorySegment) CAPSULE_GET_DESTRUCTOR.invokeExact(capsule);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
