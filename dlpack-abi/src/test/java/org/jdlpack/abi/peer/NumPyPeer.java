package org.jdlpack.abi.peer;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.ManagedTensorHandle;
import org.jdlpack.abi.ManagedTensorKind;

/**
 * NumPy running inside this JVM: CPython embedded through FFM downcalls into libpython (no JNI,
 * no Python bridge library), speaking the Python DLPack protocol the way a C extension would.
 *
 * <ul>
 *   <li>libpython is located with the {@code python3} on PATH (or {@code $JDLPACK_PYTHON}) and
 *       loaded with {@code RTLD_GLOBAL}, so NumPy's extension modules resolve its symbols;</li>
 *   <li>the GIL is taken around every use of Python objects, from whichever thread;</li>
 *   <li>capsules are named {@code dltensor} / {@code dltensor_versioned} and renamed
 *       {@code used_dltensor} / {@code used_dltensor_versioned} when consumed; the destructor of a
 *       capsule made here calls the deleter only while the capsule is still unconsumed.</li>
 * </ul>
 *
 * <p>Thread safety: every method may be called from any thread.
 */
@SuppressWarnings("restricted")
public final class NumPyPeer {

    private static final int PY_EVAL_INPUT = 258;
    private static final int RTLD_NOW = 2;
    private static final int RTLD_GLOBAL = 0x100;

    private static final String BOOTSTRAP = """
            import sys, traceback, threading, gc
            import numpy as np

            def _jdlpack_exec(src):
                try:
                    exec(src, globals())
                    return ""
                except BaseException:
                    return "ERROR " + traceback.format_exc()

            def _jdlpack_eval(src):
                try:
                    return "VALUE " + str(eval(src, globals()))
                except BaseException:
                    return "ERROR " + traceback.format_exc()

            def _refusal(f):
                try:
                    f()
                    return ""
                except BaseException as e:
                    return type(e).__name__ + ": " + str(e)

            class JavaTensor:
                # Hands NumPy a capsule made by Java. It returns the same capsule every time, so
                # that a second consume meets a used capsule, which NumPy itself must refuse.
                def __init__(self, capsule, device=(1, 0)):
                    self.capsule = capsule
                    self.device = device
                def __dlpack_device__(self):
                    return self.device
                def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
                    return self.capsule
            """;

    private static NumPyPeer instance;
    private static String unavailable;

    /** Capsule destructor calls, and how many of them released an unconsumed tensor. */
    public static final AtomicLong CAPSULE_DESTRUCTOR_CALLS = new AtomicLong();
    public static final AtomicLong CAPSULE_DESTRUCTOR_RELEASES = new AtomicLong();

    private final String description;
    private final MethodHandle gilEnsure;
    private final MethodHandle gilRelease;
    private final MethodHandle runString;
    private final MethodHandle unicodeFromString;
    private final MethodHandle unicodeAsUtf8;
    private final MethodHandle dictSetItemString;
    private final MethodHandle dictGetItemString;
    private final MethodHandle decRef;
    private final MethodHandle capsuleNew;
    private final MethodHandle capsuleGetPointer;
    private final MethodHandle capsuleSetName;
    private final MethodHandle errClear;
    private final MemorySegment globals;
    private final MemorySegment destructor;

    private static MethodHandle capsuleIsValid;
    private static MethodHandle capsuleGetPointerStatic;
    private static final Map<ManagedTensorKind, MemorySegment> UNUSED = new HashMap<>();
    private static final Map<ManagedTensorKind, MemorySegment> USED = new HashMap<>();

    static {
        UNUSED.put(ManagedTensorKind.VERSIONED, Arena.global().allocateFrom("dltensor_versioned"));
        UNUSED.put(ManagedTensorKind.LEGACY, Arena.global().allocateFrom("dltensor"));
        USED.put(ManagedTensorKind.VERSIONED, Arena.global().allocateFrom("used_dltensor_versioned"));
        USED.put(ManagedTensorKind.LEGACY, Arena.global().allocateFrom("used_dltensor"));
    }

    /**
     * The peer, started once per JVM; when NumPy or libpython is missing this fails in CI and
     * skips the calling test elsewhere.
     */
    public static synchronized NumPyPeer require() {
        if (!isAvailable()) {
            throw PeerRequirement.missing("NumPy (embedded CPython)", unavailable);
        }
        return instance;
    }

    /** Whether NumPy can be started here (it is started once), without failing or skipping anything. */
    public static synchronized boolean isAvailable() {
        if (instance == null && unavailable == null) {
            try {
                instance = start();
            } catch (PeerUnavailable e) {
                unavailable = e.getMessage();
            }
        }
        return instance != null;
    }

    private static final class PeerUnavailable extends Exception {
        private static final long serialVersionUID = 1L;

        PeerUnavailable(String message) {
            super(message);
        }
    }

    private static NumPyPeer start() throws PeerUnavailable {
        String python = System.getenv().getOrDefault("JDLPACK_PYTHON", "python3");
        String probe;
        try {
            probe = NativeBuild.run(Path.of(".").toAbsolutePath(), List.of(python, "-c", String.join("\n",
                    "import os, sys, sysconfig",
                    "import numpy",
                    "libdir = sysconfig.get_config_var('LIBDIR') or ''",
                    "name = sysconfig.get_config_var('LDLIBRARY') or ''",
                    "print('lib=' + os.path.join(libdir, name))",
                    "print('shared=' + str(sysconfig.get_config_var('Py_ENABLE_SHARED')))",
                    "print('home=' + sys.base_prefix)",
                    "print('path=' + os.pathsep.join(p for p in sys.path if p))",
                    "print('numpy=' + numpy.__version__)",
                    "print('python=' + sys.version.split()[0])")));
        } catch (IllegalStateException e) {
            throw new PeerUnavailable(python + " with NumPy could not be run: " + e.getMessage().lines().reduce((a, b) -> b).orElse(""));
        }
        Map<String, String> facts = new HashMap<>();
        probe.lines().filter(line -> line.contains("=")).forEach(line -> facts.put(line.substring(0, line.indexOf('=')),
                line.substring(line.indexOf('=') + 1)));
        Path library = Path.of(facts.getOrDefault("lib", ""));
        if (!"1".equals(facts.get("shared")) || !Files.isRegularFile(library)) {
            throw new PeerUnavailable(python + " has no shared libpython (" + library + "); embedding needs one");
        }
        return new NumPyPeer(library, facts);
    }

    private NumPyPeer(Path library, Map<String, String> facts) {
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        try (Arena arena = Arena.ofConfined()) {
            MethodHandle setenv = linker.downcallHandle(libc.find("setenv").orElseThrow(),
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
            MethodHandle dlopen = linker.downcallHandle(libc.find("dlopen").orElseThrow(),
                    FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
            // Embedded, Python cannot find its prefix from the executable (java); tell it.
            int rc = (int) setenv.invokeExact(arena.allocateFrom("PYTHONHOME"), arena.allocateFrom(facts.get("home")), 1);
            rc |= (int) setenv.invokeExact(arena.allocateFrom("PYTHONPATH"), arena.allocateFrom(facts.get("path")), 1);
            if (rc != 0) {
                throw new IllegalStateException("setenv failed");
            }
            MemorySegment handle = (MemorySegment) dlopen.invokeExact(arena.allocateFrom(library.toString()), RTLD_NOW | RTLD_GLOBAL);
            if (handle.address() == 0) {
                throw new IllegalStateException("dlopen(" + library + ", RTLD_GLOBAL) failed");
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        SymbolLookup py = SymbolLookup.libraryLookup(library, Arena.global());
        MethodHandle initialize = downcall(linker, py, "Py_InitializeEx", FunctionDescriptor.ofVoid(JAVA_INT));
        MethodHandle saveThread = downcall(linker, py, "PyEval_SaveThread", FunctionDescriptor.of(ADDRESS));
        MethodHandle importAddModule = downcall(linker, py, "PyImport_AddModule", FunctionDescriptor.of(ADDRESS, ADDRESS));
        MethodHandle moduleGetDict = downcall(linker, py, "PyModule_GetDict", FunctionDescriptor.of(ADDRESS, ADDRESS));
        MethodHandle runSimpleString = downcall(linker, py, "PyRun_SimpleString", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        gilEnsure = downcall(linker, py, "PyGILState_Ensure", FunctionDescriptor.of(JAVA_INT));
        gilRelease = downcall(linker, py, "PyGILState_Release", FunctionDescriptor.ofVoid(JAVA_INT));
        runString = downcall(linker, py, "PyRun_String", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
        unicodeFromString = downcall(linker, py, "PyUnicode_FromString", FunctionDescriptor.of(ADDRESS, ADDRESS));
        unicodeAsUtf8 = downcall(linker, py, "PyUnicode_AsUTF8", FunctionDescriptor.of(ADDRESS, ADDRESS));
        dictSetItemString = downcall(linker, py, "PyDict_SetItemString", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        dictGetItemString = downcall(linker, py, "PyDict_GetItemString", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        decRef = downcall(linker, py, "Py_DecRef", FunctionDescriptor.ofVoid(ADDRESS));
        capsuleNew = downcall(linker, py, "PyCapsule_New", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        capsuleGetPointer = downcall(linker, py, "PyCapsule_GetPointer", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        capsuleSetName = downcall(linker, py, "PyCapsule_SetName", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        errClear = downcall(linker, py, "PyErr_Clear", FunctionDescriptor.ofVoid());
        capsuleIsValid = downcall(linker, py, "PyCapsule_IsValid", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        capsuleGetPointerStatic = capsuleGetPointer;
        try {
            destructor = linker.upcallStub(MethodHandles.lookup().findStatic(NumPyPeer.class, "capsuleDestructor",
                    MethodType.methodType(void.class, MemorySegment.class)), FunctionDescriptor.ofVoid(ADDRESS), Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        try (Arena arena = Arena.ofConfined()) {
            initialize.invokeExact(0); // 0: leave the JVM's signal handlers alone
            int failed = (int) runSimpleString.invokeExact(arena.allocateFrom(BOOTSTRAP));
            MemorySegment main = (MemorySegment) importAddModule.invokeExact(arena.allocateFrom("__main__"));
            globals = (MemorySegment) moduleGetDict.invokeExact(main);
            MemorySegment state = (MemorySegment) saveThread.invokeExact(); // release the GIL for every thread to take
            if (failed != 0 || state.address() == 0) {
                throw new IllegalStateException("the NumPy peer's bootstrap failed (see stderr)");
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        description = "Python " + facts.get("python") + ", NumPy " + facts.get("numpy") + ", " + library;
        System.out.println("NumPy peer: " + description);
    }

    private static MethodHandle downcall(Linker linker, SymbolLookup lookup, String name, FunctionDescriptor descriptor) {
        return linker.downcallHandle(lookup.find(name).orElseThrow(() -> new IllegalStateException("libpython lacks " + name)),
                descriptor);
    }

    /** Which Python and NumPy this is. */
    public String description() {
        return description;
    }

    private interface WithGil<T> {
        T run(Arena arena) throws Throwable;
    }

    private <T> T withGil(WithGil<T> body) {
        int state;
        try {
            state = (int) gilEnsure.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        try (Arena arena = Arena.ofConfined()) {
            return body.run(arena);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        } finally {
            try {
                gilRelease.invokeExact(state);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
    }

    private String call(String helper, String source) {
        return withGil(arena -> {
            MemorySegment text = (MemorySegment) unicodeFromString.invokeExact(arena.allocateFrom(source));
            int rc = (int) dictSetItemString.invokeExact(globals, arena.allocateFrom("_jdlpack_src"), text);
            decRef.invokeExact(text);
            if (rc != 0) {
                throw new IllegalStateException("PyDict_SetItemString failed");
            }
            MemorySegment result = (MemorySegment) runString.invokeExact(arena.allocateFrom(helper + "(_jdlpack_src)"),
                    PY_EVAL_INPUT, globals, globals);
            if (result.address() == 0) {
                errClear.invokeExact();
                throw new IllegalStateException("PyRun_String failed for " + helper);
            }
            MemorySegment utf8 = (MemorySegment) unicodeAsUtf8.invokeExact(result);
            String value = utf8.reinterpret(Long.MAX_VALUE).getString(0);
            decRef.invokeExact(result);
            return value;
        });
    }

    /**
     * Runs Python statements in the peer's {@code __main__}.
     *
     * @throws PythonException with the traceback, if they raise
     */
    public void exec(String statements) {
        String outcome = call("_jdlpack_exec", statements);
        if (!outcome.isEmpty()) {
            throw new PythonException(outcome.substring("ERROR ".length()));
        }
    }

    /**
     * Evaluates a Python expression and returns {@code str()} of its value.
     *
     * @throws PythonException with the traceback, if it raises
     */
    public String eval(String expression) {
        String outcome = call("_jdlpack_eval", expression);
        if (outcome.startsWith("ERROR ")) {
            throw new PythonException(outcome.substring("ERROR ".length()));
        }
        return outcome.substring("VALUE ".length());
    }

    /** A Python exception, with its traceback as the message. */
    public static final class PythonException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PythonException(String traceback) {
            super(traceback);
        }

        /** The last line of the traceback: the exception type and message. */
        public String lastLine() {
            return getMessage().strip().lines().reduce((a, b) -> b).orElse("");
        }
    }

    /**
     * Consumes the capsule held by a Python variable, as a C consumer does: checks its name,
     * takes the pointer and renames it {@code used_...}.
     *
     * @return the managed-tensor pointer, now owned by the caller
     * @throws IllegalStateException if the variable is not an unconsumed capsule of that kind
     */
    public MemorySegment consumeCapsule(String variable, ManagedTensorKind kind) {
        return withGil(arena -> {
            MemorySegment capsule = (MemorySegment) dictGetItemString.invokeExact(globals, arena.allocateFrom(variable));
            if (capsule.address() == 0) {
                throw new IllegalStateException("no Python variable " + variable);
            }
            int valid = (int) capsuleIsValid.invokeExact(capsule, UNUSED.get(kind));
            if (valid == 0) {
                throw new IllegalStateException(variable + " is not an unconsumed '" + UNUSED.get(kind).getString(0)
                        + "' capsule (already consumed, or another kind)");
            }
            MemorySegment pointer = (MemorySegment) capsuleGetPointer.invokeExact(capsule, UNUSED.get(kind));
            int renamed = (int) capsuleSetName.invokeExact(capsule, USED.get(kind));
            if (pointer.address() == 0 || renamed != 0) {
                errClear.invokeExact();
                throw new IllegalStateException("could not consume capsule " + variable);
            }
            return pointer;
        });
    }

    /**
     * Wraps a managed tensor in a new capsule, stored in a Python variable; the handle's
     * ownership moves to the capsule. The capsule's destructor calls the deleter only if nobody
     * consumed it.
     */
    public void putCapsule(String variable, ManagedTensorHandle handle) {
        MemorySegment pointer = handle.consume();
        ManagedTensorKind kind = handle.kind();
        withGil(arena -> {
            MemorySegment capsule = (MemorySegment) capsuleNew.invokeExact(pointer, UNUSED.get(kind), destructor);
            if (capsule.address() == 0) {
                errClear.invokeExact();
                ManagedTensorHandle.of(kind, pointer).close();
                throw new IllegalStateException("PyCapsule_New failed");
            }
            int rc = (int) dictSetItemString.invokeExact(globals, arena.allocateFrom(variable), capsule);
            decRef.invokeExact(capsule); // the dict holds it now
            if (rc != 0) {
                throw new IllegalStateException("PyDict_SetItemString failed");
            }
            return null;
        });
    }

    /** The capsule destructor: Python calls it with the GIL held, on any thread. Never throws. */
    @SuppressWarnings("unused") // the upcall target
    private static void capsuleDestructor(MemorySegment capsule) {
        CAPSULE_DESTRUCTOR_CALLS.incrementAndGet();
        try {
            for (ManagedTensorKind kind : ManagedTensorKind.values()) {
                if ((int) capsuleIsValid.invokeExact(capsule, UNUSED.get(kind)) != 0) {
                    MemorySegment pointer = (MemorySegment) capsuleGetPointerStatic.invokeExact(capsule, UNUSED.get(kind));
                    ManagedTensorHandle.of(kind, pointer).close();
                    CAPSULE_DESTRUCTOR_RELEASES.incrementAndGet();
                    return;
                }
            }
            // A used capsule: its consumer owns the tensor now.
        } catch (Throwable t) {
            System.getLogger("org.jdlpack.peer").log(Level.ERROR, "capsule destructor failed", t);
        }
    }
}
