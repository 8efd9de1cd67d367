package org.jdlpack.python.internal.capi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

import org.jdlpack.abi.plumbing.Downcalls;

/**
 * The libpython functions on objects: references, {@code str} and numbers, tuples and sequences,
 * attributes, calls, and the modules and dicts the bootstrap runs in; see {@link LibPython}. A
 * NULL result means a Python exception is set, as the C API says.
 */
@SuppressWarnings("restricted") // a str's UTF-8 bytes, sized by Python
public final class LibPythonObjects {

    /** {@code Py_file_input}: the start symbol {@link #runString} takes for statements. */
    public static final int PY_FILE_INPUT = 257;

    private static final MethodHandle IMPORT_GET_MODULE_DICT = LibPython.bind("PyImport_GetModuleDict", FunctionDescriptor.of(ADDRESS));
    private static final MethodHandle IMPORT_ADD_MODULE = LibPython.bind("PyImport_AddModule", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle MODULE_GET_DICT = LibPython.bind("PyModule_GetDict", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle RUN_STRING = LibPython.bind("PyRun_String",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle DICT_SET_ITEM_STRING = LibPython.bind("PyDict_SetItemString",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle DICT_GET_ITEM_STRING = LibPython.bind("PyDict_GetItemString", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle INC_REF = LibPython.bindLeaf("Py_IncRef", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle DEC_REF = LibPython.bind("Py_DecRef", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MethodHandle UNICODE_FROM_STRING_AND_SIZE = LibPython.bind("PyUnicode_FromStringAndSize",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle UNICODE_AS_UTF8_AND_SIZE = LibPython.bind("PyUnicode_AsUTF8AndSize",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle UNICODE_INTERN_FROM_STRING = LibPython.bind("PyUnicode_InternFromString",
            FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_REPR = LibPython.bind("PyObject_Repr", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_SET_ATTR_STRING = LibPython.bind("PyObject_SetAttrString",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle TUPLE_SIZE = LibPython.bind("PyTuple_Size", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    private static final MethodHandle SEQUENCE_GET_ITEM = LibPython.bind("PySequence_GetItem", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle NUMBER_LONG = LibPython.bind("PyNumber_Long", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_STR = LibPython.bind("PyObject_Str", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_IS_TRUE = LibPython.bind("PyObject_IsTrue", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle OBJECT_TYPE = LibPython.bind("PyObject_Type", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_GET_ATTR_STRING = LibPython.bind("PyObject_GetAttrString",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_CALL_OBJECT = LibPython.bind("PyObject_CallObject", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle OBJECT_HAS_ATTR_STRING = LibPython.bind("PyObject_HasAttrString", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle VECTORCALL_METHOD = LibPython.bind("PyObject_VectorcallMethod",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    private static final MethodHandle TUPLE_NEW = LibPython.bind("PyTuple_New", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
    private static final MethodHandle TUPLE_SET_ITEM = LibPython.bind("PyTuple_SetItem", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS));
    private static final MethodHandle TUPLE_GET_ITEM = LibPython.bind("PyTuple_GetItem", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle LONG_FROM_LONG_LONG = LibPython.bind("PyLong_FromLongLong", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
    private static final MethodHandle LONG_AS_LONG_LONG = LibPython.bind("PyLong_AsLongLong", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    private static final MethodHandle FLOAT_FROM_DOUBLE = LibPython.bind("PyFloat_FromDouble", FunctionDescriptor.of(ADDRESS, JAVA_DOUBLE));
    private static final MethodHandle FLOAT_AS_DOUBLE = LibPython.bind("PyFloat_AsDouble", FunctionDescriptor.of(JAVA_DOUBLE, ADDRESS));

    private LibPythonObjects() {
    }

    /** {@return {@code sys.modules}, borrowed} */
    public static MemorySegment importGetModuleDict() {
        try {
            return (MemorySegment) IMPORT_GET_MODULE_DICT.invokeExact();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment importAddModule(MemorySegment name) {
        try {
            return (MemorySegment) IMPORT_ADD_MODULE.invokeExact(name);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment moduleGetDict(MemorySegment module) {
        try {
            return (MemorySegment) MODULE_GET_DICT.invokeExact(module);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment runString(MemorySegment source, int start, MemorySegment globals, MemorySegment locals) {
        try {
            return (MemorySegment) RUN_STRING.invokeExact(source, start, globals, locals);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static int dictSetItemString(MemorySegment dict, MemorySegment key, MemorySegment value) {
        try {
            return (int) DICT_SET_ITEM_STRING.invokeExact(dict, key, value);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the borrowed item, or NULL (no exception set)} */
    public static MemorySegment dictGetItemString(MemorySegment dict, MemorySegment key) {
        try {
            return (MemorySegment) DICT_GET_ITEM_STRING.invokeExact(dict, key);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static void incRef(MemorySegment object) {
        try {
            INC_REF.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code Py_DecRef}: NULL is allowed. May run destructors, and so Python code. */
    public static void decRef(MemorySegment object) {
        try {
            DEC_REF.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return a new {@code str} from UTF-8 bytes (NUL bytes included), or NULL with an exception set} */
    public static MemorySegment unicodeFromUtf8(Arena arena, String value) {
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
    public static MemorySegment unicodeUtf8(MemorySegment unicode, Arena arena) {
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
    public static MemorySegment unicodeInternFromString(MemorySegment chars) {
        try {
            return (MemorySegment) UNICODE_INTERN_FROM_STRING.invokeExact(chars);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment objectRepr(MemorySegment object) {
        try {
            return (MemorySegment) OBJECT_REPR.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return 0, or -1 with an exception set} */
    public static int objectSetAttrString(MemorySegment object, MemorySegment name, MemorySegment value) {
        try {
            return (int) OBJECT_SET_ATTR_STRING.invokeExact(object, name, value);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the tuple's length, or -1 with an exception set if it is not a tuple} */
    public static long tupleSize(MemorySegment tuple) {
        try {
            return (long) TUPLE_SIZE.invokeExact(tuple);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return a new reference to {@code sequence[index]}, or NULL with an exception set} */
    public static MemorySegment sequenceGetItem(MemorySegment sequence, long index) {
        try {
            return (MemorySegment) SEQUENCE_GET_ITEM.invokeExact(sequence, index);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return {@code int(object)}, a new reference, or NULL with an exception set} */
    public static MemorySegment numberLong(MemorySegment object) {
        try {
            return (MemorySegment) NUMBER_LONG.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment objectStr(MemorySegment object) {
        try {
            return (MemorySegment) OBJECT_STR.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return 1, 0, or -1 with an exception set} */
    public static int objectIsTrue(MemorySegment object) {
        try {
            return (int) OBJECT_IS_TRUE.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return a new reference to the object's type} */
    public static MemorySegment objectType(MemorySegment object) {
        try {
            return (MemorySegment) OBJECT_TYPE.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment objectGetAttrString(MemorySegment object, MemorySegment name) {
        try {
            return (MemorySegment) OBJECT_GET_ATTR_STRING.invokeExact(object, name);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return 1 if {@code object} has the attribute (a C string), else 0; never leaves an exception set} */
    public static int objectHasAttrString(MemorySegment object, MemorySegment name) {
        try {
            return (int) OBJECT_HAS_ATTR_STRING.invokeExact(object, name);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code PyObject_VectorcallMethod(name, args, nargsf, kwnames)}: calls the method {@code name}
     * (a {@code str}) of {@code args[0]} with the rest of {@code args}; {@return a new reference to
     * the result, or NULL with an exception set}
     */
    public static MemorySegment vectorcallMethod(MemorySegment name, MemorySegment arguments, long nargsf, MemorySegment keywordNames) {
        try {
            return (MemorySegment) VECTORCALL_METHOD.invokeExact(name, arguments, nargsf, keywordNames);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment callObject(MemorySegment callable, MemorySegment arguments) {
        try {
            return (MemorySegment) OBJECT_CALL_OBJECT.invokeExact(callable, arguments);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment tupleNew(long size) {
        try {
            return (MemorySegment) TUPLE_NEW.invokeExact(size);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Steals {@code item}; {@return 0, or -1 with an exception set} */
    public static int tupleSetItem(MemorySegment tuple, long index, MemorySegment item) {
        try {
            return (int) TUPLE_SET_ITEM.invokeExact(tuple, index, item);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the borrowed item, or NULL with an exception set (not a tuple, out of range)} */
    public static MemorySegment tupleGetItem(MemorySegment tuple, long index) {
        try {
            return (MemorySegment) TUPLE_GET_ITEM.invokeExact(tuple, index);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment longFromLong(long value) {
        try {
            return (MemorySegment) LONG_FROM_LONG_LONG.invokeExact(value);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the value (through {@code __index__}), or -1 with an exception set} */
    public static long longAsLong(MemorySegment object) {
        try {
            return (long) LONG_AS_LONG_LONG.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    public static MemorySegment floatFromDouble(double value) {
        try {
            return (MemorySegment) FLOAT_FROM_DOUBLE.invokeExact(value);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return the value (through {@code __float__} or {@code __index__}), or -1.0 with an exception set} */
    public static double floatAsDouble(MemorySegment object) {
        try {
            return (double) FLOAT_AS_DOUBLE.invokeExact(object);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
