package org.jdlpack.python.internal.capi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.NativeLibrary;

/**
 * The call layer of libpython: how its functions are bound, the objects every area reads
 * ({@code None}, {@code True}, {@code False}), memory outside Python objects, and the C functions
 * called by address (an exchange API entry, a {@code SetError}, a deleter).
 *
 * <p>The call layer is this class and one class per area of the C API, each binding its own
 * functions and holding one static method per function: {@link LibPythonGil} (the interpreter's
 * life and the GIL), {@link LibPythonObjects} (references, values, tuples, attributes, calls,
 * modules), {@link LibPythonCapsules}, {@link LibPythonTypes} (types and built-in functions) and
 * {@link LibPythonErrors} (the error indicator and the exception types). Each method holds the
 * only {@code invokeExact} of its downcall, so that no other code of this module invokes a method
 * handle or declares {@code throws Throwable}. What a downcall throws follows
 * {@link Downcalls#rethrow}: an {@link Error} as it is, a runtime exception (a closed scope's
 * {@link IllegalStateException}) as it is, a missing function as the
 * {@code PythonUnavailableException} {@link EmbeddedPython#open} was given, naming it. Every {@code PyObject*} is a zero-length
 * {@link MemorySegment}; the methods check nothing Python does not check itself (a NULL result
 * means a Python exception is set, as the C API says).
 *
 * <p>Only the stable, exported C API is used (no macros), so any CPython 3.9 or newer with a
 * shared libpython works. Two facts of the object layout are used, both read from the interpreter
 * at run time: the size of the {@code PyObject} header ({@code object.__basicsize__}), after which
 * this module's own type puts its fields, and that {@code ob_type} is the header's last field (in
 * default and free-threaded builds alike).
 *
 * <p>The library is the one {@link EmbeddedPython#open} opened with {@code RTLD_GLOBAL} before this
 * class is first used; these classes are initialized only after that (their handles are constants
 * the JIT inlines). They are also the module's one place for restricted calls, but for the
 * native-access check the runtime makes before it starts Python.
 *
 * <p>Thread safety: the handles are immutable; the Python rules apply to what they call (most
 * need the GIL).
 */
@SuppressWarnings("restricted")
public final class LibPython {

    private static final Linker LINKER = Linker.nativeLinker();
    /** All of memory, for reading the structs Python and producers hand over; sliced to each struct's size. */
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);
    private static final NativeLibrary LIBRARY = EmbeddedPython.library();

    private static final MethodHandle SETENV = bind("setenv", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    /** A C function by its address: {@code int f(void*, void*)}, the exchange API's calls with two pointers. */
    private static final MethodHandle CALL_INT_POINTER_POINTER = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    /** A C function by its address: {@code void f(void*, const char*, const char*)}, the exchange allocator's {@code SetError}. */
    private static final MethodHandle CALL_POINTER_POINTER_POINTER = LINKER.downcallHandle(
            FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, ADDRESS));
    /** A C function by its address: {@code void f(void*)}, a deleter. */
    private static final MethodHandle CALL_POINTER = LINKER.downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));

    /** {@code Py_None}, {@code Py_True} and {@code Py_False}. */
    public static final MemorySegment NONE = LIBRARY.symbol("_Py_NoneStruct");
    public static final MemorySegment TRUE = LIBRARY.symbol("_Py_TrueStruct");
    public static final MemorySegment FALSE = LIBRARY.symbol("_Py_FalseStruct");
    /** {@code PyTuple_Type} and {@code PyLong_Type}: an object whose type is one of these exactly cannot change. */
    public static final MemorySegment TUPLE_TYPE = LIBRARY.symbol("PyTuple_Type");
    public static final MemorySegment LONG_TYPE = LIBRARY.symbol("PyLong_Type");

    private LibPython() {
    }

    /**
     * A leaf function: one that never calls back into Python or Java, never blocks and never runs
     * long (reference count increments, reading a capsule's name, making a capsule), bound as a
     * critical downcall ({@link Linker.Option#critical}), which skips the thread-state transition.
     * Only calls that cannot fail qualify: raising allocates an exception, which may start Python's
     * garbage collector and so run finalizers, Python code that may call back into Java.
     */
    static MethodHandle bindLeaf(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(LIBRARY.symbol(name), descriptor, Linker.Option.critical(false));
    }

    /** The downcall for {@code name}; a missing function fails at the call, naming it. */
    static MethodHandle bind(String name, FunctionDescriptor descriptor) {
        return LIBRARY.bind(name, descriptor, LIBRARY.name().orElse("libpython") + " has no function " + name
                + ", which dlpack-python calls; it needs CPython 3.9 or newer");
    }

    /** {@return the value of a {@code PyObject*} variable: {@code PyExc_TypeError} and its kind} */
    static MemorySegment exceptionType(String name) {
        return LIBRARY.symbol(name).reinterpret(ADDRESS.byteSize()).get(ADDRESS, 0);
    }

    // ---- Strings and memory outside Python objects ----

    /** {@return the NUL-terminated UTF-8 string at {@code chars}} */
    public static String string(MemorySegment chars) {
        return chars.reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** {@return {@code length} bytes at {@code address}, readable and writable} */
    public static MemorySegment memory(MemorySegment address, long length) {
        return ALL.asSlice(address.address(), length); // a slice: no restricted call on the hot paths
    }

    /**
     * {@link #memory(MemorySegment, long)} at a raw address: for upcalls that take their pointers
     * as 64-bit integers, so that the stub boxes no segment per call.
     *
     * @param address the address
     * @param length  the byte size
     * @return the segment
     */
    public static MemorySegment memory(long address, long length) {
        return ALL.asSlice(address, length);
    }

    /**
     * {@return the address of the type of the Python object at {@code object} (not NULL): its
     * {@code ob_type}, the last field of the object header}
     *
     * @param object the object's address
     */
    public static long typeOf(long object) {
        long header = EmbeddedPython.objectSize();
        return ALL.get(JAVA_LONG, object + header - ADDRESS.byteSize());
    }

    /** {@code setenv(name, value, 1)} from libc (reached through libpython's dependencies). */
    public static int setenv(MemorySegment name, MemorySegment value) {
        try {
            return (int) SETENV.invokeExact(name, value, 1);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    // ---- C functions by address ----

    /** Calls {@code int function(void* first, void* second)}, an exchange API entry. */
    public static int callIntPointerPointer(MemorySegment function, MemorySegment first, MemorySegment second) {
        try {
            return (int) CALL_INT_POINTER_POINTER.invokeExact(function, first, second);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Calls {@code void function(void* context, const char* kind, const char* message)}, a {@code SetError}. */
    public static void callSetError(MemorySegment function, MemorySegment context, MemorySegment kind, MemorySegment message) {
        try {
            CALL_POINTER_POINTER_POINTER.invokeExact(function, context, kind, message);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Calls {@code void function(void* argument)}, a deleter. */
    public static void callPointer(MemorySegment function, MemorySegment argument) {
        try {
            CALL_POINTER.invokeExact(function, argument);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
