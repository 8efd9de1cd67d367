package org.jdlpack.python;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.NativeLibrary;

/**
 * The call layer of libpython: one static method per C API function jdlpack calls, each holding
 * the only {@code invokeExact} of its downcall, so that no other code of this module invokes a
 * method handle or declares {@code throws Throwable}. What a downcall throws follows
 * {@link Downcalls#rethrow}: an {@link Error} as it is, a runtime exception (a closed scope's
 * {@link IllegalStateException}) as it is, a missing function as a
 * {@link PythonUnavailableException} naming it. Every {@code PyObject*} is a zero-length
 * {@link MemorySegment}; the methods check nothing Python does not check itself (a NULL result
 * means a Python exception is set, as the C API says).
 *
 * <p>Only the stable, exported C API is used (no macros), so any CPython 3.9 or newer with a
 * shared libpython works. Two facts of the object layout are used, both read from the interpreter
 * at run time: the size of the {@code PyObject} header ({@code object.__basicsize__}), after which
 * this module's own type puts its fields, and that {@code ob_type} is the header's last field (in
 * default and free-threaded builds alike).
 *
 * <p>The library is the one {@link Interpreter#start} opened with {@code RTLD_GLOBAL} before this
 * class is first used; this class is initialized only after that (its handles are constants the
 * JIT inlines). It is also the module's one place for restricted calls, but for the native-access
 * check in {@link Interpreter}.
 *
 * <p>Thread safety: the handles are immutable; the Python rules apply to what they call (most
 * need the GIL).
 */
@SuppressWarnings("restricted")
final class LibPython {

    static final int PY_FILE_INPUT = 257;
    /** {@code METH_FASTCALL}: {@code PyObject* f(PyObject* self, PyObject* const* args, Py_ssize_t nargs)}. */
    static final int METH_FASTCALL = 0x0080;
    /** With {@code METH_FASTCALL}: {@code PyObject* f(self, args, nargs, PyObject* kwnames)}, keyword values after the positional ones. */
    static final int METH_KEYWORDS = 0x0002;
    /** {@code METH_NOARGS}: {@code PyObject* f(PyObject* self, PyObject* unused)}. */
    static final int METH_NOARGS = 0x0004;
    /** {@code Py_TPFLAGS_DEFAULT}: {@code Py_TPFLAGS_HAVE_VERSION_TAG}. */
    static final int TPFLAGS_DEFAULT = 1 << 18;
    /** {@code Py_TPFLAGS_DISALLOW_INSTANTIATION} (3.10 and newer): calling the type raises {@code TypeError}. */
    static final int TPFLAGS_DISALLOW_INSTANTIATION = 1 << 7;
    /** {@code PyType_Slot} numbers (typeslots.h, part of the stable ABI). */
    static final int TP_DEALLOC = 52;
    static final int TP_DOC = 56;
    static final int TP_METHODS = 64;
    static final int TP_MEMBERS = 72;
    static final int TP_FREE = 74;
    /** {@code PyMemberDef} types and flags (structmember.h, part of the stable ABI). */
    static final int T_OBJECT_EX = 16;
    static final int T_PYSSIZET = 19;
    static final int READONLY = 1;

    /** {@code PyMethodDef}: ml_name, ml_meth, ml_flags, ml_doc. */
    static final MemoryLayout METHOD_DEF = MemoryLayout.structLayout(ADDRESS.withName("ml_name"), ADDRESS.withName("ml_meth"),
            JAVA_INT.withName("ml_flags"), MemoryLayout.paddingLayout(4), ADDRESS.withName("ml_doc"));

    /** {@code PyMemberDef}: name, type, offset, flags, doc. */
    static final MemoryLayout MEMBER_DEF = MemoryLayout.structLayout(ADDRESS.withName("name"), JAVA_INT.withName("type"),
            MemoryLayout.paddingLayout(4), JAVA_LONG.withName("offset"), JAVA_INT.withName("flags"), MemoryLayout.paddingLayout(4),
            ADDRESS.withName("doc"));
    /** {@code PyType_Spec}: name, basicsize, itemsize, flags, slots. */
    static final MemoryLayout TYPE_SPEC = MemoryLayout.structLayout(ADDRESS.withName("name"), JAVA_INT.withName("basicsize"),
            JAVA_INT.withName("itemsize"), JAVA_INT.withName("flags"), MemoryLayout.paddingLayout(4), ADDRESS.withName("slots"));
    /** {@code PyType_Slot}: slot, pfunc. */
    static final MemoryLayout TYPE_SLOT = MemoryLayout.structLayout(JAVA_INT.withName("slot"), MemoryLayout.paddingLayout(4),
            ADDRESS.withName("pfunc"));

    private static final Linker LINKER = Linker.nativeLinker();
    /** All of memory, for reading the structs Python and producers hand over; sliced to each struct's size. */
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    private static final NativeLibrary LIBRARY = Interpreter.library();

    private static final MethodHandle INITIALIZE_EX = bind("Py_InitializeEx", FunctionDescriptor.ofVoid(JAVA_INT));
    private static final MethodHandle IS_INITIALIZED = bind("Py_IsInitialized", FunctionDescriptor.of(JAVA_INT));
    private static final MethodHandle SAVE_THREAD = bind("PyEval_SaveThread", FunctionDescriptor.of(ADDRESS));
    private static final MethodHandle RESTORE_THREAD = bind("PyEval_RestoreThread", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle GIL_ENSURE = bind("PyGILState_Ensure", FunctionDescriptor.of(JAVA_INT));
    private static final MethodHandle GIL_RELEASE = bind("PyGILState_Release", FunctionDescriptor.ofVoid(JAVA_INT));
    private static final MethodHandle IMPORT_ADD_MODULE = bind("PyImport_AddModule", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle MODULE_GET_DICT = bind("PyModule_GetDict", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle RUN_STRING = bind("PyRun_String",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle DICT_SET_ITEM_STRING = bind("PyDict_SetItemString",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle DICT_GET_ITEM_STRING = bind("PyDict_GetItemString", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle INC_REF = bindLeaf("Py_IncRef", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle DEC_REF = bind("Py_DecRef", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle UNICODE_FROM_STRING_AND_SIZE = bind("PyUnicode_FromStringAndSize",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle UNICODE_AS_UTF8_AND_SIZE = bind("PyUnicode_AsUTF8AndSize",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle UNICODE_INTERN_FROM_STRING = bind("PyUnicode_InternFromString",
            FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_REPR = bind("PyObject_Repr", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_SET_ATTR_STRING = bind("PyObject_SetAttrString",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle TUPLE_SIZE = bind("PyTuple_Size", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    private static final MethodHandle SEQUENCE_GET_ITEM = bind("PySequence_GetItem", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle NUMBER_LONG = bind("PyNumber_Long", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle TYPE_FROM_SPEC = bind("PyType_FromSpec", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle TYPE_GET_SLOT = bind("PyType_GetSlot", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
    private static final MethodHandle TYPE_GENERIC_ALLOC = bind("PyType_GenericAlloc", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle OBJECT_CLEAR_WEAK_REFS = bind("PyObject_ClearWeakRefs", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle OBJECT_STR = bind("PyObject_Str", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_IS_TRUE = bind("PyObject_IsTrue", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle OBJECT_TYPE = bind("PyObject_Type", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_GET_ATTR_STRING = bind("PyObject_GetAttrString",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_CALL_OBJECT = bind("PyObject_CallObject", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle TUPLE_NEW = bind("PyTuple_New", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
    private static final MethodHandle TUPLE_SET_ITEM = bind("PyTuple_SetItem", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS));
    private static final MethodHandle TUPLE_GET_ITEM = bind("PyTuple_GetItem", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle LONG_FROM_LONG_LONG = bind("PyLong_FromLongLong", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
    private static final MethodHandle LONG_AS_LONG_LONG = bind("PyLong_AsLongLong", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    private static final MethodHandle FLOAT_FROM_DOUBLE = bind("PyFloat_FromDouble", FunctionDescriptor.of(ADDRESS, JAVA_DOUBLE));
    private static final MethodHandle FLOAT_AS_DOUBLE = bind("PyFloat_AsDouble", FunctionDescriptor.of(JAVA_DOUBLE, ADDRESS));
    private static final MethodHandle CAPSULE_NEW = bindLeaf("PyCapsule_New", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle CAPSULE_IS_VALID = bind("PyCapsule_IsValid", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle CAPSULE_GET_POINTER = bind("PyCapsule_GetPointer", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle CAPSULE_SET_NAME = bind("PyCapsule_SetName", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle CAPSULE_GET_NAME = bind("PyCapsule_GetName", FunctionDescriptor.of(ADDRESS, ADDRESS));
    /** The same function, as a leaf: only for a capsule known to be one, where it cannot fail (and so allocates nothing). */
    private static final MethodHandle OWN_CAPSULE_GET_NAME = bindLeaf("PyCapsule_GetName", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle CFUNCTION_NEW = bind("PyCFunction_New", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle ERR_SET_STRING = bind("PyErr_SetString", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
    private static final MethodHandle ERR_OCCURRED = bindLeaf("PyErr_Occurred", FunctionDescriptor.of(ADDRESS));
    private static final MethodHandle ERR_EXCEPTION_MATCHES = bind("PyErr_ExceptionMatches", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle ERR_FETCH = bind("PyErr_Fetch", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle ERR_CLEAR = bind("PyErr_Clear", FunctionDescriptor.ofVoid());
    private static final MethodHandle ERR_PRINT = bind("PyErr_Print", FunctionDescriptor.ofVoid());
    private static final MethodHandle SETENV = bind("setenv", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    /** A C function by its address: {@code int f(void*, void*)}, the exchange API's calls with two pointers. */
    private static final MethodHandle CALL_INT_POINTER_POINTER = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** A C function by its address: {@code void f(void*, const char*, const char*)}, the exchange allocator's {@code SetError}. */
    private static final MethodHandle CALL_POINTER_POINTER_POINTER = LINKER.downcallHandle(
            FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS));
    /** A C function by its address: {@code void f(void*)}, a deleter. */
    private static final MethodHandle CALL_POINTER = LINKER.downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));

    /** {@code Py_None}, {@code Py_True} and {@code Py_False}. */
    static final MemorySegment NONE = LIBRARY.symbol("_Py_NoneStruct");
    static final MemorySegment TRUE = LIBRARY.symbol("_Py_TrueStruct");
    static final MemorySegment FALSE = LIBRARY.symbol("_Py_FalseStruct");
    /** The exception types upcalls raise: {@code PyExc_...} are {@code PyObject*} variables whose value is the type. */
    static final MemorySegment BUFFER_ERROR = exceptionType("PyExc_BufferError");
    static final MemorySegment RUNTIME_ERROR = exceptionType("PyExc_RuntimeError");
    static final MemorySegment TYPE_ERROR = exceptionType("PyExc_TypeError");
    static final MemorySegment VALUE_ERROR = exceptionType("PyExc_ValueError");
    static final MemorySegment OVERFLOW_ERROR = exceptionType("PyExc_OverflowError");
    /** {@code PyBaseObject_Type}: {@code object}. */
    static final MemorySegment OBJECT_TYPE_OBJECT = LIBRARY.symbol("PyBaseObject_Type");

    private LibPython() {
    }

    /**
     * A leaf function: one that never calls back into Python or Java, never blocks and never runs
     * long (reference count increments, reading a capsule's name, making a capsule), bound as a
     * critical downcall ({@link Linker.Option#critical}), which skips the thread-state transition.
     * Only calls that cannot fail qualify: raising allocates an exception, which may start Python's
     * garbage collector and so run finalizers, Python code that may call back into Java.
     */
    private static MethodHandle bindLeaf(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(LIBRARY.symbol(name), descriptor, Linker.Option.critical(false));
    }

    private static MethodHandle bind(String name, FunctionDescriptor descriptor) {
        return LIBRARY.bind(name, descriptor, LIBRARY.name().orElse("libpython") + " has no function " + name
                + ", which dlpack-python calls; it needs CPython 3.9 or newer");
    }

    private static MemorySegment exceptionType(String name) {
        return LIBRARY.symbol(name).reinterpret(ADDRESS.byteSize()).get(ADDRESS, 0);
    }

    // ---- Strings and memory outside Python objects ----

    /** {@return the NUL-terminated UTF-8 string at {@code chars}} */
    static String string(MemorySegment chars) {
        return chars.reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** {@return {@code length} bytes at {@code address}, readable and writable} */
    static MemorySegment memory(MemorySegment address, long length) {
        return ALL.asSlice(address.address(), length); // a slice: no restricted call on the hot paths
    }

    // ---- The interpreter and the GIL ----

    static void initializeEx(int initsigs) {
        try {
            INITIALIZE_EX.invokeExact(initsigs);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static boolean isInitialized() {
        try {
            return (int) IS_INITIALIZED.invokeExact() != 0;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment saveThread() {
        try {
            return (MemorySegment) SAVE_THREAD.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void restoreThread(MemorySegment state) {
        try {
            RESTORE_THREAD.invokeExact(state);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static int gilEnsure() {
        try {
            return (int) GIL_ENSURE.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void gilRelease(int state) {
        try {
            GIL_RELEASE.invokeExact(state);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code setenv(name, value, 1)} from libc (reached through libpython's dependencies). */
    static int setenv(MemorySegment name, MemorySegment value) {
        try {
            return (int) SETENV.invokeExact(name, value, 1);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    // ---- Modules, dicts, running code ----

    static MemorySegment importAddModule(MemorySegment name) {
        try {
            return (MemorySegment) IMPORT_ADD_MODULE.invokeExact(name);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment moduleGetDict(MemorySegment module) {
        try {
            return (MemorySegment) MODULE_GET_DICT.invokeExact(module);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment runString(MemorySegment source, int start, MemorySegment globals, MemorySegment locals) {
        try {
            return (MemorySegment) RUN_STRING.invokeExact(source, start, globals, locals);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static int dictSetItemString(MemorySegment dict, MemorySegment key, MemorySegment value) {
        try {
            return (int) DICT_SET_ITEM_STRING.invokeExact(dict, key, value);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the borrowed item, or NULL (no exception set)} */
    static MemorySegment dictGetItemString(MemorySegment dict, MemorySegment key) {
        try {
            return (MemorySegment) DICT_GET_ITEM_STRING.invokeExact(dict, key);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    // ---- References ----

    static void incRef(MemorySegment object) {
        try {
            INC_REF.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code Py_DecRef}: NULL is allowed. May run destructors, and so Python code. */
    static void decRef(MemorySegment object) {
        try {
            DEC_REF.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    // ---- Objects ----

    /** {@return a new {@code str} from UTF-8 bytes (NUL bytes included), or NULL with an exception set} */
    static MemorySegment unicodeFromUtf8(Arena arena, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        MemorySegment chars = arena.allocate(bytes.length + 1L);
        MemorySegment.copy(bytes, 0, chars, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, bytes.length);
        try {
            return (MemorySegment) UNICODE_FROM_STRING_AND_SIZE.invokeExact(chars, (long) bytes.length);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code PyUnicode_AsUTF8AndSize}: the string's UTF-8 bytes, owned by the string, as a segment
     * of their length; NULL with an exception set if {@code unicode} is not a {@code str}.
     */
    static MemorySegment unicodeUtf8(MemorySegment unicode, Arena arena) {
        MemorySegment size = arena.allocate(JAVA_LONG);
        MemorySegment chars;
        try {
            chars = (MemorySegment) UNICODE_AS_UTF8_AND_SIZE.invokeExact(unicode, size);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
        return chars.address() == 0 ? chars : chars.reinterpret(size.get(JAVA_LONG, 0));
    }

    /** {@return a new reference to the interned {@code str}, or NULL with an exception set} */
    static MemorySegment unicodeInternFromString(MemorySegment chars) {
        try {
            return (MemorySegment) UNICODE_INTERN_FROM_STRING.invokeExact(chars);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment objectRepr(MemorySegment object) {
        try {
            return (MemorySegment) OBJECT_REPR.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return 0, or -1 with an exception set} */
    static int objectSetAttrString(MemorySegment object, MemorySegment name, MemorySegment value) {
        try {
            return (int) OBJECT_SET_ATTR_STRING.invokeExact(object, name, value);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the tuple's length, or -1 with an exception set if it is not a tuple} */
    static long tupleSize(MemorySegment tuple) {
        try {
            return (long) TUPLE_SIZE.invokeExact(tuple);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return a new reference to {@code sequence[index]}, or NULL with an exception set} */
    static MemorySegment sequenceGetItem(MemorySegment sequence, long index) {
        try {
            return (MemorySegment) SEQUENCE_GET_ITEM.invokeExact(sequence, index);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return {@code int(object)}, a new reference, or NULL with an exception set} */
    static MemorySegment numberLong(MemorySegment object) {
        try {
            return (MemorySegment) NUMBER_LONG.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return a new heap type, or NULL with an exception set} */
    static MemorySegment typeFromSpec(MemorySegment spec) {
        try {
            return (MemorySegment) TYPE_FROM_SPEC.invokeExact(spec);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the function in a type's slot ({@code Py_tp_free}, ...), or NULL} */
    static MemorySegment typeGetSlot(MemorySegment type, int slot) {
        try {
            return (MemorySegment) TYPE_GET_SLOT.invokeExact(type, slot);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return a new, zero-filled instance of {@code type} holding a reference to it, or NULL with an exception set} */
    static MemorySegment typeGenericAlloc(MemorySegment type) {
        try {
            return (MemorySegment) TYPE_GENERIC_ALLOC.invokeExact(type, 0L);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void objectClearWeakRefs(MemorySegment object) {
        try {
            OBJECT_CLEAR_WEAK_REFS.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment objectStr(MemorySegment object) {
        try {
            return (MemorySegment) OBJECT_STR.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return 1, 0, or -1 with an exception set} */
    static int objectIsTrue(MemorySegment object) {
        try {
            return (int) OBJECT_IS_TRUE.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return a new reference to the object's type} */
    static MemorySegment objectType(MemorySegment object) {
        try {
            return (MemorySegment) OBJECT_TYPE.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment objectGetAttrString(MemorySegment object, MemorySegment name) {
        try {
            return (MemorySegment) OBJECT_GET_ATTR_STRING.invokeExact(object, name);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment callObject(MemorySegment callable, MemorySegment arguments) {
        try {
            return (MemorySegment) OBJECT_CALL_OBJECT.invokeExact(callable, arguments);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment tupleNew(long size) {
        try {
            return (MemorySegment) TUPLE_NEW.invokeExact(size);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Steals {@code item}; {@return 0, or -1 with an exception set} */
    static int tupleSetItem(MemorySegment tuple, long index, MemorySegment item) {
        try {
            return (int) TUPLE_SET_ITEM.invokeExact(tuple, index, item);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the borrowed item, or NULL with an exception set (not a tuple, out of range)} */
    static MemorySegment tupleGetItem(MemorySegment tuple, long index) {
        try {
            return (MemorySegment) TUPLE_GET_ITEM.invokeExact(tuple, index);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment longFromLong(long value) {
        try {
            return (MemorySegment) LONG_FROM_LONG_LONG.invokeExact(value);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the value (through {@code __index__}), or -1 with an exception set} */
    static long longAsLong(MemorySegment object) {
        try {
            return (long) LONG_AS_LONG_LONG.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment floatFromDouble(double value) {
        try {
            return (MemorySegment) FLOAT_FROM_DOUBLE.invokeExact(value);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the value (through {@code __float__} or {@code __index__}), or -1.0 with an exception set} */
    static double floatAsDouble(MemorySegment object) {
        try {
            return (double) FLOAT_AS_DOUBLE.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    // ---- Capsules and built-in functions ----

    static MemorySegment capsuleNew(MemorySegment pointer, MemorySegment name, MemorySegment destructor) {
        try {
            return (MemorySegment) CAPSULE_NEW.invokeExact(pointer, name, destructor);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return whether {@code object} is a capsule named {@code name} with a pointer; never sets an exception} */
    static boolean capsuleIsValid(MemorySegment object, MemorySegment name) {
        try {
            return (int) CAPSULE_IS_VALID.invokeExact(object, name) != 0;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment capsuleGetPointer(MemorySegment capsule, MemorySegment name) {
        try {
            return (MemorySegment) CAPSULE_GET_POINTER.invokeExact(capsule, name);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static int capsuleSetName(MemorySegment capsule, MemorySegment name) {
        try {
            return (int) CAPSULE_SET_NAME.invokeExact(capsule, name);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the capsule's name pointer (NULL for a nameless capsule, or NULL with an exception set if not a capsule)} */
    static MemorySegment capsuleGetName(MemorySegment capsule) {
        try {
            return (MemorySegment) CAPSULE_GET_NAME.invokeExact(capsule);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code PyCapsule_GetName} of a capsule this module made, which cannot fail: a leaf call. */
    static MemorySegment ownCapsuleGetName(MemorySegment capsule) {
        try {
            return (MemorySegment) OWN_CAPSULE_GET_NAME.invokeExact(capsule);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static MemorySegment cFunctionNew(MemorySegment methodDef, MemorySegment self) {
        try {
            return (MemorySegment) CFUNCTION_NEW.invokeExact(methodDef, self);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    // ---- Errors ----

    static void errSetString(MemorySegment type, MemorySegment message) {
        try {
            ERR_SET_STRING.invokeExact(type, message);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return whether an exception is set} */
    static boolean errOccurred() {
        try {
            return ((MemorySegment) ERR_OCCURRED.invokeExact()).address() != 0;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static boolean errExceptionMatches(MemorySegment type) {
        try {
            return (int) ERR_EXCEPTION_MATCHES.invokeExact(type) != 0;
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code PyErr_Fetch} into three pointer slots (type, value, traceback; new references or NULL); clears the indicator. */
    static void errFetch(MemorySegment type, MemorySegment value, MemorySegment traceback) {
        try {
            ERR_FETCH.invokeExact(type, value, traceback);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void errClear() {
        try {
            ERR_CLEAR.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void errPrint() {
        try {
            ERR_PRINT.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    // ---- C functions by address ----

    /** Calls {@code int function(void* first, void* second)}, an exchange API entry. */
    static int callIntPointerPointer(MemorySegment function, MemorySegment first, MemorySegment second) {
        try {
            return (int) CALL_INT_POINTER_POINTER.invokeExact(function, first, second);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Calls {@code void function(void* context, const char* kind, const char* message)}, a {@code SetError}. */
    static void callSetError(MemorySegment function, MemorySegment context, MemorySegment kind, MemorySegment message) {
        try {
            CALL_POINTER_POINTER_POINTER.invokeExact(function, context, kind, message);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Calls {@code void function(void* argument)}, a deleter. */
    static void callPointer(MemorySegment function, MemorySegment argument) {
        try {
            CALL_POINTER.invokeExact(function, argument);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
