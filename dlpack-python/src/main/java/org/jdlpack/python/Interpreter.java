package org.jdlpack.python;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.nio.charset.StandardCharsets;

import org.jdlpack.abi.plumbing.NativeAccess;
import org.jdlpack.python.internal.bridge.Capsules;
import org.jdlpack.python.internal.bridge.CpuSource;
import org.jdlpack.python.internal.bridge.DLPackArguments;
import org.jdlpack.python.internal.bridge.ExchangeApi;
import org.jdlpack.python.internal.bridge.ExchangeImports;
import org.jdlpack.python.internal.bridge.ForeignDeleterGuard;
import org.jdlpack.python.internal.bridge.JavaTensorType;
import org.jdlpack.python.internal.bridge.JavaTensors;
import org.jdlpack.python.internal.bridge.TorchViewBits;
import org.jdlpack.python.internal.capi.EmbeddedPython;
import org.jdlpack.python.internal.capi.Gil;
import org.jdlpack.python.internal.capi.LibPython;
import org.jdlpack.python.internal.capi.LibPythonCapsules;
import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonGil;
import org.jdlpack.python.internal.capi.LibPythonObjects;
import org.jdlpack.python.internal.capi.LibPythonTypes;
import org.jdlpack.python.internal.objects.FastcallArguments;
import org.jdlpack.python.internal.objects.PythonError;
import org.jdlpack.python.internal.objects.PythonErrors;
import org.jdlpack.python.internal.objects.PythonStrings;

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
 * <p>This is the one class that knows every layer: it opens the call layer
 * ({@link EmbeddedPython}), initializes the classes that run under the GIL, and installs the
 * bridges' type and function ({@link JavaTensors}, {@link JavaTensorType}, {@link ExchangeApi})
 * before the bootstrap runs.
 *
 * <p>Thread safety: {@link #start} runs once, under the runtime's lock; the instance is
 * immutable.
 */
final class Interpreter {

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

    /**
     * Loads {@code location}'s libpython, starts or joins its interpreter and runs the bootstrap.
     *
     * @throws PythonUnavailableException if the library does not load
     * @throws IllegalCallerException     naming the flag, if native access is denied to this module
     */
    static Interpreter start(PythonLocation pythonLocation) {
        String bootstrap = bootstrapSource();
        EmbeddedPython.open(pythonLocation.library(), pythonLocation.objectSize(), PythonUnavailableException::new);
        initializeUpcallClasses();
        try (Arena arena = Arena.ofConfined()) {
            boolean started = !LibPythonGil.isInitialized();
            int hostGilState = 0;
            if (started) {
                // Embedded, Python cannot find its prefix from the executable (java); tell it.
                int rc = LibPython.setenv(arena.allocateFrom("PYTHONHOME"), arena.allocateFrom(pythonLocation.home()));
                rc |= LibPython.setenv(arena.allocateFrom("PYTHONPATH"), arena.allocateFrom(pythonLocation.path()));
                if (rc != 0) {
                    throw new IllegalStateException("setenv(PYTHONHOME/PYTHONPATH) failed");
                }
                LibPythonGil.initializeEx(0); // 0: leave the JVM's signal handlers alone
            } else {
                hostGilState = LibPythonGil.gilEnsure(); // a host's interpreter: take the GIL as any thread would
            }
            Interpreter interpreter;
            try {
                interpreter = new Interpreter(arena, runBootstrap(arena, bootstrap, pythonLocation.atLeast(3, 10)));
            } finally {
                if (started) {
                    MemorySegment state = LibPythonGil.saveThread(); // let every thread take the GIL
                    if (state.address() == 0) {
                        throw new IllegalStateException("PyEval_SaveThread returned NULL");
                    }
                } else {
                    LibPythonGil.gilRelease(hostGilState);
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
        boolean disabled = NativeAccess.disabled(Interpreter.class);
        try {
            MemorySegment.NULL.reinterpret(0);
            NativeAccess.warnIfWasDisabled(Interpreter.class, disabled);
        } catch (IllegalCallerException e) {
            throw NativeAccess.denied(Interpreter.class, e);
        }
    }

    /**
     * Initializes the classes whose code runs under the GIL (the call layer, upcall targets, their
     * stubs and method definitions, the exceptions thrown there), so that no class initializer runs
     * there.
     */
    private static void initializeUpcallClasses() {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        for (Class<?> type : new Class<?>[] {
                // the call layer and the GIL
                LibPython.class, LibPythonGil.class, LibPythonObjects.class, LibPythonCapsules.class, LibPythonTypes.class,
                LibPythonErrors.class, Gil.class,
                // Python objects and values
                PythonStrings.class, PythonErrors.class, PythonError.class, FastcallArguments.class, FastcallArguments.Refused.class,
                GuardedCalls.class, PythonValues.class, CallArguments.class, PythonException.class,
                // the tensor bridges
                JavaTensors.class, JavaTensorType.class, DLPackArguments.class, ExchangeApi.class, ExchangeImports.class,
                ExchangeImports.Offer.class, TorchViewBits.class,
                Capsules.class, ForeignDeleterGuard.class, ExportRequest.class, CpuSource.class}) {
            try {
                lookup.ensureInitialized(type);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Runs the bootstrap in a fresh {@code _jdlpack} module; {@return that module's dict}. Needs the GIL. */
    private static MemorySegment runBootstrap(Arena arena, String bootstrap, boolean disallowInstantiation) {
        MemorySegment main = LibPythonObjects.importAddModule(arena.allocateFrom("__main__"));
        MemorySegment mainDict = LibPythonObjects.moduleGetDict(main);
        MemorySegment module = LibPythonObjects.importAddModule(arena.allocateFrom("_jdlpack"));
        MemorySegment dict = LibPythonObjects.moduleGetDict(module);
        MemorySegment builtins = LibPythonObjects.dictGetItemString(mainDict, arena.allocateFrom("__builtins__"));
        int rc = LibPythonObjects.dictSetItemString(dict, arena.allocateFrom("__builtins__"), builtins);
        JavaTensors.install(dict);
        JavaTensorType.install(arena, dict, disallowInstantiation);
        ExchangeApi.attach(arena, JavaTensorType.type());
        MemorySegment result = LibPythonObjects.runString(arena.allocateFrom(bootstrap), LibPythonObjects.PY_FILE_INPUT, dict, dict);
        if (rc != 0 || result.address() == 0) {
            LibPythonErrors.errPrint();
            throw new IllegalStateException("the Python bootstrap of dlpack-python failed (traceback on stderr)");
        }
        LibPythonObjects.decRef(result);
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
        MemorySegment object = LibPythonObjects.dictGetItemString(dict, arena.allocateFrom(name));
        if (object.address() == 0) {
            throw new IllegalStateException("the bootstrap did not define " + name);
        }
        LibPythonObjects.incRef(object);
        return object;
    }
}
