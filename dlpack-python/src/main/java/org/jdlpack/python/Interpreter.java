package org.jdlpack.python;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.nio.charset.StandardCharsets;

import org.jdlpack.abi.plumbing.NativeAccess;
import org.jdlpack.abi.plumbing.NativeLibrary;
import org.jdlpack.abi.plumbing.ProcessState;
import org.jdlpack.abi.plumbing.Upcalls;

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
 * <p>The upcall stubs Python holds (the Java tensor type's methods, capsule destructors, the
 * deleter guard) are made in one {@link Upcalls} that lives as long as the interpreter, which is
 * the life of the process: Python keeps those pointers without telling anyone when it stops.
 *
 * <p>Thread safety: {@link #start} runs once, under {@link PythonRuntime}'s lock; the instance is
 * immutable, and the static state is published before any upcall can run.
 */
final class Interpreter {

    // Set once by start, before LibPython and the upcall classes are initialized (they read them there).
    private static volatile NativeLibrary library;
    private static volatile Upcalls upcalls;
    private static volatile PythonLocation location;

    /** {@code _guard(f, *args)}: every call from Java goes through it (see {@link GuardedCalls}). */
    final MemorySegment guard;
    final MemorySegment execFunction;
    final MemorySegment evalFunction;
    final MemorySegment getFunction;
    final MemorySegment setFunction;
    final MemorySegment capsuleOf;

    private Interpreter(Arena arena, MemorySegment dict) {
        guard = member(arena, dict, "_guard");
        execFunction = member(arena, dict, "_exec");
        evalFunction = member(arena, dict, "_eval");
        getFunction = member(arena, dict, "_get");
        setFunction = member(arena, dict, "_set");
        capsuleOf = member(arena, dict, "_capsule_of");
    }

    /** {@return libpython, opened; only after {@link #start} has opened it} */
    static NativeLibrary library() {
        NativeLibrary opened = library;
        if (opened == null) {
            throw new IllegalStateException("libpython is used before PythonRuntime opened it");
        }
        return opened;
    }

    /** {@return the Python being started or running, for the classes that read its layout; only after {@link #start} began} */
    static PythonLocation location() {
        PythonLocation started = location;
        if (started == null) {
            throw new IllegalStateException("the Python location is read before PythonRuntime started");
        }
        return started;
    }

    /** {@return the stubs' owner, for the upcall classes; only after {@link #start} has made it} */
    static Upcalls upcalls() {
        Upcalls made = upcalls;
        if (made == null) {
            throw new IllegalStateException("an upcall stub is made before PythonRuntime started");
        }
        return made;
    }

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

    /**
     * Loads {@code location}'s libpython, starts or joins its interpreter and runs the bootstrap.
     *
     * @throws PythonUnavailableException if the library does not load
     * @throws IllegalCallerException     naming the flag, if native access is denied to this module
     */
    static Interpreter start(PythonLocation pythonLocation) {
        String bootstrap = bootstrapSource();
        location = pythonLocation;
        library = NativeLibrary.openGlobally(PythonRuntime.class, pythonLocation.library(), PythonUnavailableException::new);
        upcalls = Upcalls.open(PythonRuntime.class);
        // CPython cannot be restarted, and it keeps pointers to these stubs for as long as it
        // lives (method definitions, type slots, capsule destructors): kept on purpose, and said
        // so whenever someone asks to release jdlpack's process-wide state.
        ProcessState.register(KEPT_FOR_THE_PROCESS);
        initializeUpcallClasses();
        try (Arena arena = Arena.ofConfined()) {
            boolean started = !LibPython.isInitialized();
            int hostGilState = 0;
            if (started) {
                // Embedded, Python cannot find its prefix from the executable (java); tell it.
                int rc = LibPython.setenv(arena.allocateFrom("PYTHONHOME"), arena.allocateFrom(pythonLocation.home()));
                rc |= LibPython.setenv(arena.allocateFrom("PYTHONPATH"), arena.allocateFrom(pythonLocation.path()));
                if (rc != 0) {
                    throw new IllegalStateException("setenv(PYTHONHOME/PYTHONPATH) failed");
                }
                LibPython.initializeEx(0); // 0: leave the JVM's signal handlers alone
            } else {
                hostGilState = LibPython.gilEnsure(); // a host's interpreter: take the GIL as any thread would
            }
            Interpreter interpreter;
            try {
                interpreter = new Interpreter(arena, runBootstrap(arena, bootstrap));
            } finally {
                if (started) {
                    MemorySegment state = LibPython.saveThread(); // let every thread take the GIL
                    if (state.address() == 0) {
                        throw new IllegalStateException("PyEval_SaveThread returned NULL");
                    }
                } else {
                    LibPython.gilRelease(hostGilState);
                }
            }
            return interpreter;
        }
    }

    /**
     * Makes the module's first restricted call, before any class initializer that needs native
     * access runs: a JVM that denies it to this module fails here, with the flag named, and not
     * with an {@link ExceptionInInitializerError}; one that only warns logs jdlpack's warning.
     *
     * @throws IllegalCallerException naming the flag
     */
    @SuppressWarnings("restricted")
    static void requireNativeAccess() {
        boolean disabled = NativeAccess.disabled(PythonRuntime.class);
        try {
            MemorySegment.NULL.reinterpret(0);
            NativeAccess.warnIfWasDisabled(PythonRuntime.class, disabled);
        } catch (IllegalCallerException e) {
            throw NativeAccess.denied(PythonRuntime.class, e);
        }
    }

    /**
     * Initializes the classes whose code runs under the GIL (the call layer, upcall targets, their
     * stubs and method definitions, the exceptions thrown there), so that no class initializer runs
     * there.
     */
    private static void initializeUpcallClasses() {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        for (Class<?> type : new Class<?>[] {LibPython.class, Gil.class, JavaTensors.class, JavaTensorType.class, ExchangeApi.class,
                ExchangeImports.class, Capsules.class, ForeignDeleterGuard.class, FastcallArguments.class, FastcallArguments.Refused.class,
                GuardedCalls.class, PythonException.class, PythonValues.class, ExportRequest.class, CpuSource.class}) {
            try {
                lookup.ensureInitialized(type);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Runs the bootstrap in a fresh {@code _jdlpack} module; {@return that module's dict}. Needs the GIL. */
    private static MemorySegment runBootstrap(Arena arena, String bootstrap) {
        MemorySegment main = LibPython.importAddModule(arena.allocateFrom("__main__"));
        MemorySegment mainDict = LibPython.moduleGetDict(main);
        MemorySegment module = LibPython.importAddModule(arena.allocateFrom("_jdlpack"));
        MemorySegment dict = LibPython.moduleGetDict(module);
        MemorySegment builtins = LibPython.dictGetItemString(mainDict, arena.allocateFrom("__builtins__"));
        int rc = LibPython.dictSetItemString(dict, arena.allocateFrom("__builtins__"), builtins);
        JavaTensors.install(dict);
        JavaTensorType.install(arena, dict);
        MemorySegment result = LibPython.runString(arena.allocateFrom(bootstrap), LibPython.PY_FILE_INPUT, dict, dict);
        if (rc != 0 || result.address() == 0) {
            LibPython.errPrint();
            throw new IllegalStateException("the Python bootstrap of dlpack-python failed (traceback on stderr)");
        }
        LibPython.decRef(result);
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
    private static MemorySegment member(Arena arena, MemorySegment dict, String name) {
        MemorySegment object = LibPython.dictGetItemString(dict, arena.allocateFrom(name));
        if (object.address() == 0) {
            throw new IllegalStateException("the bootstrap did not define " + name);
        }
        LibPython.incRef(object);
        return object;
    }
}
