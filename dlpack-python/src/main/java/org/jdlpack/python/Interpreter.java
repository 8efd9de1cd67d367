package org.jdlpack.python;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.nio.charset.StandardCharsets;

/**
 * Bringing up the embedded interpreter: libpython loaded {@code RTLD_GLOBAL}, the interpreter
 * started (or a host's running one joined), and the Python half of the bridge ({@code bootstrap.py},
 * a resource next to this class) run in the module {@code _jdlpack}, whose functions are kept here
 * for the life of the process. The GIL is released again before {@link #start} returns.
 *
 * <p>Everything Java has to prepare (the bootstrap source, the bindings, the upcall stubs and
 * method definitions, the classes upcalls use) is done before the interpreter starts: from
 * {@code Py_InitializeEx} to {@code PyEval_SaveThread} only downcalls run, so that a virtual thread
 * starting Python cannot unmount and release the GIL from another carrier (see {@link Gil}).
 *
 * <p>Thread safety: {@link #start} runs once, under {@link PythonRuntime#get()}'s lock; the
 * instance is immutable.
 */
@SuppressWarnings("restricted")
final class Interpreter {

    private static final int RTLD_NOW = 2;
    private static final int RTLD_GLOBAL = 0x100;

    // Upcalls read it without a runtime at hand; published before the first upcall can run.
    private static volatile LibPython lib;

    final LibPython py;
    /** {@code _guard(f, *args)}: every call from Java goes through it (see {@link GuardedCalls}). */
    final MemorySegment guard;
    final MemorySegment execFunction;
    final MemorySegment evalFunction;
    final MemorySegment getFunction;
    final MemorySegment setFunction;
    final MemorySegment capsuleOf;
    /** {@code _java_tensor(registration, device_type, device_id)}: makes a {@code JavaTensor}. */
    final MemorySegment javaTensorFactory;

    private Interpreter(LibPython py, Arena arena, MemorySegment dict) throws Throwable {
        this.py = py;
        guard = member(py, arena, dict, "_guard");
        execFunction = member(py, arena, dict, "_exec");
        evalFunction = member(py, arena, dict, "_eval");
        getFunction = member(py, arena, dict, "_get");
        setFunction = member(py, arena, dict, "_set");
        capsuleOf = member(py, arena, dict, "_capsule_of");
        javaTensorFactory = member(py, arena, dict, "_java_tensor");
    }

    /** {@return the libpython bindings, or null before the first {@link #start}} */
    static LibPython lib() {
        return lib;
    }

    /**
     * Loads {@code location}'s libpython, starts or joins its interpreter and runs the bootstrap.
     *
     * @throws PythonUnavailableException if the library does not load
     */
    static Interpreter start(PythonLocation location) {
        String bootstrap = bootstrapSource();
        initializeUpcallClasses();
        Linker linker = Linker.nativeLinker();
        try (Arena arena = Arena.ofConfined()) {
            MethodHandle dlopen = linker.downcallHandle(linker.defaultLookup().find("dlopen").orElseThrow(),
                    FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
            MemorySegment handle = (MemorySegment) dlopen.invokeExact(arena.allocateFrom(location.library().toString()),
                    RTLD_NOW | RTLD_GLOBAL);
            if (handle.address() == 0) {
                throw new PythonUnavailableException("dlopen(" + location.library() + ", RTLD_GLOBAL) failed");
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        LibPython py = new LibPython(location.library());
        lib = py;
        try (Arena arena = Arena.ofConfined()) {
            boolean started = (int) py.isInitialized.invokeExact() == 0;
            int hostGilState = 0;
            if (started) {
                // Embedded, Python cannot find its prefix from the executable (java); tell it.
                MethodHandle setenv = linker.downcallHandle(linker.defaultLookup().find("setenv").orElseThrow(),
                        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
                int rc = (int) setenv.invokeExact(arena.allocateFrom("PYTHONHOME"), arena.allocateFrom(location.home()), 1);
                rc |= (int) setenv.invokeExact(arena.allocateFrom("PYTHONPATH"), arena.allocateFrom(location.path()), 1);
                if (rc != 0) {
                    throw new IllegalStateException("setenv(PYTHONHOME/PYTHONPATH) failed");
                }
                py.initializeEx.invokeExact(0); // 0: leave the JVM's signal handlers alone
            } else {
                hostGilState = (int) py.gilEnsure.invokeExact(); // a host's interpreter: take the GIL as any thread would
            }
            Interpreter interpreter = new Interpreter(py, arena, runBootstrap(py, arena, bootstrap));
            if (started) {
                MemorySegment state = (MemorySegment) py.saveThread.invokeExact(); // let every thread take the GIL
                if (state.address() == 0) {
                    throw new IllegalStateException("PyEval_SaveThread returned NULL");
                }
            } else {
                py.gilRelease.invokeExact(hostGilState);
            }
            return interpreter;
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Initializes the classes whose code runs under the GIL (upcall targets, their stubs and
     * method definitions, the exceptions thrown there), so that no class initializer runs there.
     */
    private static void initializeUpcallClasses() {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        for (Class<?> type : new Class<?>[] {JavaTensors.class, Capsules.class, ForeignDeleterGuard.class, FastcallArguments.class,
                FastcallArguments.Refused.class, GuardedCalls.class, PythonException.class}) {
            try {
                lookup.ensureInitialized(type);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Runs the bootstrap in a fresh {@code _jdlpack} module; {@return that module's dict}. Needs the GIL. */
    private static MemorySegment runBootstrap(LibPython py, Arena arena, String bootstrap) throws Throwable {
        MemorySegment main = (MemorySegment) py.importAddModule.invokeExact(arena.allocateFrom("__main__"));
        MemorySegment mainDict = (MemorySegment) py.moduleGetDict.invokeExact(main);
        MemorySegment module = (MemorySegment) py.importAddModule.invokeExact(arena.allocateFrom("_jdlpack"));
        MemorySegment dict = (MemorySegment) py.moduleGetDict.invokeExact(module);
        MemorySegment builtins = (MemorySegment) py.dictGetItemString.invokeExact(mainDict, arena.allocateFrom("__builtins__"));
        int rc = (int) py.dictSetItemString.invokeExact(dict, arena.allocateFrom("__builtins__"), builtins);
        JavaTensors.install(py, dict);
        MemorySegment result = (MemorySegment) py.runString.invokeExact(arena.allocateFrom(bootstrap), LibPython.PY_FILE_INPUT,
                dict, dict);
        if (rc != 0 || result.address() == 0) {
            py.errPrint.invokeExact();
            throw new IllegalStateException("the Python bootstrap of dlpack-python failed (traceback on stderr)");
        }
        py.decRef.invokeExact(result);
        return dict;
    }

    // Read before libpython is touched, so that a broken jar fails without side effects on the process.
    private static String bootstrapSource() {
        try (InputStream in = Interpreter.class.getResourceAsStream("bootstrap.py")) {
            if (in == null) {
                throw new IllegalStateException("bootstrap.py is missing from the org.jdlpack.python module");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A module-level object of {@code _jdlpack}, kept alive for the life of the process. */
    private static MemorySegment member(LibPython py, Arena arena, MemorySegment dict, String name) throws Throwable {
        MemorySegment object = (MemorySegment) py.dictGetItemString.invokeExact(dict, arena.allocateFrom(name));
        if (object.address() == 0) {
            throw new IllegalStateException("the bootstrap did not define " + name);
        }
        py.incRef.invokeExact(object);
        return object;
    }
}
