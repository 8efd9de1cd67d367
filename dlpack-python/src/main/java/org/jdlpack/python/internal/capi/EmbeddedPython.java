package org.jdlpack.python.internal.capi;

import java.nio.file.Path;
import java.util.function.Function;

import org.jdlpack.abi.plumbing.NativeLibrary;
import org.jdlpack.abi.plumbing.ProcessState;
import org.jdlpack.abi.plumbing.Upcalls;

/**
 * The process's embedded CPython as the layers above the call layer see it: the libpython
 * {@link #open} loaded, the owner of the upcall stubs Python keeps, and the size of the
 * {@code PyObject} header. Set once, before the call layer's classes are initialized (their
 * handles are constants read there) and before any upcall stub is made.
 *
 * <p>The upcall stubs Python holds (the Java tensor type's methods, capsule destructors, the
 * deleter guard) are made in one {@link Upcalls} that lives as long as the interpreter, which is
 * the life of the process: Python keeps those pointers without telling anyone when it stops, and
 * CPython cannot be restarted. That is said whenever someone asks to release jdlpack's
 * process-wide state ({@link ProcessState}).
 *
 * <p>Thread safety: {@link #open} runs once (under {@code PythonRuntime}'s lock); the state is
 * published through volatile fields before any upcall can run.
 */
public final class EmbeddedPython {

    private static volatile NativeLibrary library;
    private static volatile Upcalls upcalls;
    private static volatile long objectSize;

    /** What {@code DLPackRuntime.release()} is told once the interpreter started: it cannot be released. */
    private static final ProcessState.Part KEPT_FOR_THE_PROCESS = new ProcessState.Part() {
        @Override
        public String live() {
            return "dlpack-python's embedded interpreter, whose upcall stubs CPython keeps for the life of the process "
                    + "(CPython cannot be restarted); to unload a class loader that used it, load jdlpack from the engine's "
                    + "own class path instead (docs/engines.md)";
        }

        @Override
        public void release() {
            throw new IllegalStateException(live());
        }
    };

    private EmbeddedPython() {
    }

    /**
     * Loads {@code libpython} with {@code RTLD_GLOBAL} (so that extension modules such as NumPy
     * resolve its symbols) and opens the stubs' owner for the life of the process.
     *
     * @param libpython   the shared library
     * @param headerSize  {@code object.__basicsize__} of that Python: where this module's type puts its fields
     * @param unavailable the exception for a library that does not load or lacks a function
     * @throws IllegalCallerException naming the flag, if native access is denied to this module
     */
    public static void open(Path libpython, long headerSize, Function<String, ? extends RuntimeException> unavailable) {
        objectSize = headerSize;
        library = NativeLibrary.openGlobally(EmbeddedPython.class, libpython, unavailable);
        upcalls = Upcalls.open(EmbeddedPython.class);
        ProcessState.register(KEPT_FOR_THE_PROCESS);
    }

    /** {@return libpython, opened; only after {@link #open}} */
    static NativeLibrary library() {
        NativeLibrary opened = library;
        if (opened == null) {
            throw new IllegalStateException("libpython is used before PythonRuntime opened it");
        }
        return opened;
    }

    /** {@return the stubs' owner, for the upcall classes; only after {@link #open}} */
    public static Upcalls upcalls() {
        Upcalls made = upcalls;
        if (made == null) {
            throw new IllegalStateException("an upcall stub is made before PythonRuntime started");
        }
        return made;
    }

    /** {@return the size of the {@code PyObject} header, {@code object.__basicsize__}; only after {@link #open}} */
    public static long objectSize() {
        long size = objectSize;
        if (size == 0) {
            throw new IllegalStateException("the Python object layout is read before PythonRuntime started");
        }
        return size;
    }
}
