package org.jdlpack.python.internal.capi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import org.jdlpack.abi.plumbing.Downcalls;

/**
 * The libpython functions and stable-ABI structs for making types and built-in functions: the
 * {@code PyType_Spec}, {@code PyType_Slot}, {@code PyMethodDef} and {@code PyMemberDef} layouts and
 * their constants (typeslots.h, structmember.h, methodobject.h), {@code PyType_FromSpec},
 * allocation and {@code PyCFunction_New}; see {@link LibPython}.
 */
public final class LibPythonTypes {

    /** {@code METH_FASTCALL}: {@code PyObject* f(PyObject* self, PyObject* const* args, Py_ssize_t nargs)}. */
    public static final int METH_FASTCALL = 0x0080;
    /** With {@code METH_FASTCALL}: {@code PyObject* f(self, args, nargs, PyObject* kwnames)}, keyword values after the positional ones. */
    public static final int METH_KEYWORDS = 0x0002;
    /** {@code METH_NOARGS}: {@code PyObject* f(PyObject* self, PyObject* unused)}. */
    public static final int METH_NOARGS = 0x0004;
    /** {@code Py_TPFLAGS_DEFAULT}: {@code Py_TPFLAGS_HAVE_VERSION_TAG}. */
    public static final int TPFLAGS_DEFAULT = 1 << 18;
    /** {@code Py_TPFLAGS_DISALLOW_INSTANTIATION} (3.10 and newer): calling the type raises {@code TypeError}. */
    public static final int TPFLAGS_DISALLOW_INSTANTIATION = 1 << 7;
    /** {@code PyType_Slot} numbers (typeslots.h, part of the stable ABI). */
    public static final int TP_DEALLOC = 52;
    public static final int TP_DOC = 56;
    public static final int TP_METHODS = 64;
    public static final int TP_MEMBERS = 72;
    public static final int TP_FREE = 74;
    /** {@code PyMemberDef} types and flags (structmember.h, part of the stable ABI). */
    public static final int T_OBJECT_EX = 16;
    public static final int T_PYSSIZET = 19;
    public static final int READONLY = 1;

    /** {@code PyMethodDef}: ml_name, ml_meth, ml_flags, ml_doc. */
    public static final MemoryLayout METHOD_DEF = MemoryLayout.structLayout(ADDRESS.withName("ml_name"), ADDRESS.withName("ml_meth"),
            JAVA_INT.withName("ml_flags"), MemoryLayout.paddingLayout(4), ADDRESS.withName("ml_doc"));
    /** {@code PyMemberDef}: name, type, offset, flags, doc. */
    public static final MemoryLayout MEMBER_DEF = MemoryLayout.structLayout(ADDRESS.withName("name"), JAVA_INT.withName("type"),
            MemoryLayout.paddingLayout(4), JAVA_LONG.withName("offset"), JAVA_INT.withName("flags"), MemoryLayout.paddingLayout(4),
            ADDRESS.withName("doc"));
    /** {@code PyType_Spec}: name, basicsize, itemsize, flags, slots. */
    public static final MemoryLayout TYPE_SPEC = MemoryLayout.structLayout(ADDRESS.withName("name"), JAVA_INT.withName("basicsize"),
            JAVA_INT.withName("itemsize"), JAVA_INT.withName("flags"), MemoryLayout.paddingLayout(4), ADDRESS.withName("slots"));
    /** {@code PyType_Slot}: slot, pfunc. */
    public static final MemoryLayout TYPE_SLOT = MemoryLayout.structLayout(JAVA_INT.withName("slot"), MemoryLayout.paddingLayout(4),
            ADDRESS.withName("pfunc"));

    private static final MethodHandle TYPE_FROM_SPEC = LibPython.bind("PyType_FromSpec", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle TYPE_GET_SLOT = LibPython.bind("PyType_GetSlot", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
    private static final MethodHandle TYPE_GENERIC_ALLOC = LibPython.bind("PyType_GenericAlloc", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle OBJECT_CLEAR_WEAK_REFS = LibPython.bind("PyObject_ClearWeakRefs", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle CFUNCTION_NEW = LibPython.bind("PyCFunction_New", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));

    private LibPythonTypes() {
    }

    /** {@return a new heap type, or NULL with an exception set} */
    public static MemorySegment typeFromSpec(MemorySegment spec) {
        try {
            return (MemorySegment) TYPE_FROM_SPEC.invokeExact(spec);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the function in a type's slot ({@code Py_tp_free}, ...), or NULL} */
    public static MemorySegment typeGetSlot(MemorySegment type, int slot) {
        try {
            return (MemorySegment) TYPE_GET_SLOT.invokeExact(type, slot);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return a new, zero-filled instance of {@code type} holding a reference to it, or NULL with an exception set} */
    public static MemorySegment typeGenericAlloc(MemorySegment type) {
        try {
            return (MemorySegment) TYPE_GENERIC_ALLOC.invokeExact(type, 0L);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static void objectClearWeakRefs(MemorySegment object) {
        try {
            OBJECT_CLEAR_WEAK_REFS.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment cFunctionNew(MemorySegment methodDef, MemorySegment self) {
        try {
            return (MemorySegment) CFUNCTION_NEW.invokeExact(methodDef, self);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
