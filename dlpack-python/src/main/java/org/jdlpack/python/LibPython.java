package org.jdlpack.python;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * The libpython functions jdlpack calls: one downcall handle per C API function, bound once the
 * library is loaded. Every {@code PyObject*} is a zero-length {@link MemorySegment}.
 *
 * <p>Only the stable, exported C API is used (no macros, no struct fields of Python objects), so
 * any CPython 3.8 or newer with a shared libpython works.
 *
 * <p>Thread safety: the handles are immutable; the Python rules apply to what they call (most
 * need the GIL).
 */
@SuppressWarnings("restricted")
final class LibPython {

    static final int PY_FILE_INPUT = 257;
    /** {@code METH_FASTCALL}: {@code PyObject* f(PyObject* self, PyObject* const* args, Py_ssize_t nargs)}. */
    static final int METH_FASTCALL = 0x0080;

    final MethodHandle initializeEx;
    final MethodHandle isInitialized;
    final MethodHandle saveThread;
    final MethodHandle restoreThread;
    final MethodHandle gilEnsure;
    final MethodHandle gilRelease;
    final MethodHandle importAddModule;
    final MethodHandle moduleGetDict;
    final MethodHandle runString;
    final MethodHandle dictSetItemString;
    final MethodHandle dictGetItemString;
    final MethodHandle incRef;
    final MethodHandle decRef;
    final MethodHandle unicodeFromString;
    final MethodHandle unicodeAsUtf8;
    final MethodHandle objectStr;
    final MethodHandle objectIsTrue;
    final MethodHandle objectType;
    final MethodHandle objectGetAttrString;
    final MethodHandle callObject;
    final MethodHandle tupleNew;
    final MethodHandle tupleSetItem;
    final MethodHandle tupleGetItem;
    final MethodHandle longFromLongLong;
    final MethodHandle longAsLongLong;
    final MethodHandle capsuleNew;
    final MethodHandle capsuleIsValid;
    final MethodHandle capsuleGetPointer;
    final MethodHandle capsuleSetName;
    final MethodHandle capsuleGetName;
    final MethodHandle cFunctionNew;
    final MethodHandle errSetString;
    final MethodHandle errOccurred;
    final MethodHandle errExceptionMatches;
    final MethodHandle errClear;
    final MethodHandle errPrint;
    /** {@code Py_None}, {@code Py_True} and {@code Py_False}. */
    final MemorySegment none;
    final MemorySegment trueObject;
    final MemorySegment falseObject;
    /** {@code PyExc_BufferError}, {@code PyExc_RuntimeError}, ...: the exception types upcalls raise. */
    final MemorySegment bufferError;
    final MemorySegment runtimeError;
    final MemorySegment typeError;
    final MemorySegment valueError;
    final MemorySegment overflowError;

    LibPython(Path library) {
        Linker linker = Linker.nativeLinker();
        SymbolLookup py = SymbolLookup.libraryLookup(library, Arena.global());
        initializeEx = downcall(linker, py, "Py_InitializeEx", FunctionDescriptor.ofVoid(JAVA_INT));
        isInitialized = downcall(linker, py, "Py_IsInitialized", FunctionDescriptor.of(JAVA_INT));
        saveThread = downcall(linker, py, "PyEval_SaveThread", FunctionDescriptor.of(ADDRESS));
        restoreThread = downcall(linker, py, "PyEval_RestoreThread", FunctionDescriptor.ofVoid(ADDRESS));
        gilEnsure = downcall(linker, py, "PyGILState_Ensure", FunctionDescriptor.of(JAVA_INT));
        gilRelease = downcall(linker, py, "PyGILState_Release", FunctionDescriptor.ofVoid(JAVA_INT));
        importAddModule = downcall(linker, py, "PyImport_AddModule", FunctionDescriptor.of(ADDRESS, ADDRESS));
        moduleGetDict = downcall(linker, py, "PyModule_GetDict", FunctionDescriptor.of(ADDRESS, ADDRESS));
        runString = downcall(linker, py, "PyRun_String", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
        dictSetItemString = downcall(linker, py, "PyDict_SetItemString", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        dictGetItemString = downcall(linker, py, "PyDict_GetItemString", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        incRef = downcall(linker, py, "Py_IncRef", FunctionDescriptor.ofVoid(ADDRESS));
        decRef = downcall(linker, py, "Py_DecRef", FunctionDescriptor.ofVoid(ADDRESS));
        unicodeFromString = downcall(linker, py, "PyUnicode_FromString", FunctionDescriptor.of(ADDRESS, ADDRESS));
        unicodeAsUtf8 = downcall(linker, py, "PyUnicode_AsUTF8", FunctionDescriptor.of(ADDRESS, ADDRESS));
        objectStr = downcall(linker, py, "PyObject_Str", FunctionDescriptor.of(ADDRESS, ADDRESS));
        objectIsTrue = downcall(linker, py, "PyObject_IsTrue", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        objectType = downcall(linker, py, "PyObject_Type", FunctionDescriptor.of(ADDRESS, ADDRESS));
        objectGetAttrString = downcall(linker, py, "PyObject_GetAttrString", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        callObject = downcall(linker, py, "PyObject_CallObject", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        tupleNew = downcall(linker, py, "PyTuple_New", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
        tupleSetItem = downcall(linker, py, "PyTuple_SetItem", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS));
        tupleGetItem = downcall(linker, py, "PyTuple_GetItem", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG));
        longFromLongLong = downcall(linker, py, "PyLong_FromLongLong", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
        longAsLongLong = downcall(linker, py, "PyLong_AsLongLong", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
        capsuleNew = downcall(linker, py, "PyCapsule_New", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        capsuleIsValid = downcall(linker, py, "PyCapsule_IsValid", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        capsuleGetPointer = downcall(linker, py, "PyCapsule_GetPointer", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        capsuleSetName = downcall(linker, py, "PyCapsule_SetName", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        capsuleGetName = downcall(linker, py, "PyCapsule_GetName", FunctionDescriptor.of(ADDRESS, ADDRESS));
        cFunctionNew = downcall(linker, py, "PyCFunction_New", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        errSetString = downcall(linker, py, "PyErr_SetString", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
        errOccurred = downcall(linker, py, "PyErr_Occurred", FunctionDescriptor.of(ADDRESS));
        errExceptionMatches = downcall(linker, py, "PyErr_ExceptionMatches", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        errClear = downcall(linker, py, "PyErr_Clear", FunctionDescriptor.ofVoid());
        errPrint = downcall(linker, py, "PyErr_Print", FunctionDescriptor.ofVoid());
        none = symbol(py, "_Py_NoneStruct");
        trueObject = symbol(py, "_Py_TrueStruct");
        falseObject = symbol(py, "_Py_FalseStruct");
        bufferError = exceptionType(py, "PyExc_BufferError");
        runtimeError = exceptionType(py, "PyExc_RuntimeError");
        typeError = exceptionType(py, "PyExc_TypeError");
        valueError = exceptionType(py, "PyExc_ValueError");
        overflowError = exceptionType(py, "PyExc_OverflowError");
    }

    private static MemorySegment symbol(SymbolLookup lookup, String name) {
        return lookup.find(name).orElseThrow(() -> new PythonUnavailableException("libpython lacks " + name));
    }

    /** {@code PyExc_...} is a {@code PyObject*} variable: its value is the type. */
    private static MemorySegment exceptionType(SymbolLookup lookup, String name) {
        return symbol(lookup, name).reinterpret(ADDRESS.byteSize()).get(ADDRESS, 0);
    }

    private static MethodHandle downcall(Linker linker, SymbolLookup lookup, String name, FunctionDescriptor descriptor) {
        return linker.downcallHandle(symbol(lookup, name), descriptor);
    }
}
