package org.jdlpack.python;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Objects;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorHandle;

/**
 * CPython embedded in this JVM through FFM downcalls into libpython: no JNI, no bridge library.
 *
 * <p><b>Which Python.</b> The {@code python3} named by the environment variable
 * {@code JDLPACK_PYTHON}, else the {@code python3} on PATH, is asked (through {@code sysconfig}) for
 * its shared libpython, which is loaded with {@code RTLD_GLOBAL} so that extension modules (NumPy,
 * PyTorch) resolve its symbols. One interpreter lives per process: the first {@link #get()} starts
 * it, and it is never finalized by jdlpack. If the process already runs an initialized interpreter
 * from that library, it is used as it is.
 *
 * <p><b>Tensors.</b> {@link #toPython(DLPackSource)} makes a Python object implementing the array
 * API's {@code __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)} and
 * {@code __dlpack_device__()}, so that {@code np.from_dlpack(x)} and {@code torch.from_dlpack(x)}
 * take Java tensors directly. {@link #importTensor(PythonObject)} imports any object with
 * {@code __dlpack__} (or an unconsumed DLPack capsule) into an {@link ImportedTensor}, zero copy.
 *
 * <p><b>The GIL.</b> Every method takes the GIL for its own duration and releases it before
 * returning; it is never held while control is in user code. Python code may start threads and
 * call back into Java tensors' {@code __dlpack__} from them.
 *
 * <p><b>Lifetime.</b> The runtime lives until the process ends. If whoever embeds Python finalizes
 * the interpreter, later calls throw {@link IllegalStateException}, and cleanups that would touch
 * Python (dropping a {@link PythonObject}, a Python producer's deleter) leak instead and are
 * counted in {@link #leakedAfterFinalization()}.
 *
 * <p>Thread safety: every method may be called from any thread.
 */
@SuppressWarnings("restricted")
public final class PythonRuntime {

    private static final int RTLD_NOW = 2;
    private static final int RTLD_GLOBAL = 0x100;

    /** The Python half of the bridge, run once in a module of its own, {@code _jdlpack}. */
    private static final String BOOTSTRAP = """
            import sys, traceback

            _main = sys.modules['__main__'].__dict__

            def _guard(f, *args):
                # Every call from Java comes through here, so that Java sees (ok, value) or
                # (False, traceback) and never a pending exception.
                try:
                    return (True, f(*args))
                except BaseException:
                    return (False, traceback.format_exc())

            def _exec(src):
                exec(src, _main)

            def _eval(src):
                return eval(src, _main)

            def _get(name):
                return _main[name]

            def _set(name, value):
                _main[name] = value

            def _capsule_of(obj):
                if type(obj).__name__ == 'PyCapsule':
                    return obj
                if getattr(type(obj), '__dlpack__', None) is None:
                    raise TypeError(type(obj).__module__ + '.' + type(obj).__qualname__ + ' has no __dlpack__')
                try:
                    return obj.__dlpack__(max_version=(1, 3))
                except TypeError:
                    # A producer older than DLPack 1.0 does not take max_version: the array API's fallback.
                    return obj.__dlpack__()

            class JavaTensor:
                '''A Java tensor: np.from_dlpack(x) and torch.from_dlpack(x) take it without copying.'''
                __slots__ = ('_jdlpack_id', '_jdlpack_device', '__weakref__')

                def __init__(self, ident, device_type, device_id):
                    self._jdlpack_id = ident
                    self._jdlpack_device = (device_type, device_id)

                def __dlpack_device__(self):
                    return self._jdlpack_device

                def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
                    if dl_device is not None and (int(dl_device[0]), int(dl_device[1])) != self._jdlpack_device:
                        raise BufferError('this Java tensor lives on device %r and cannot be exported to %r'
                                          % (self._jdlpack_device, tuple(dl_device)))
                    if copy is not None and not isinstance(copy, bool):
                        raise TypeError('copy must be None, True or False, not %r' % (copy,))
                    versioned = max_version is not None and int(max_version[0]) >= 1
                    if stream is not None:
                        stream = int(stream)
                    return _jdlpack_dlpack(self._jdlpack_id, versioned, stream, -1 if copy is None else int(copy))

                def __del__(self, _release=_jdlpack_release):
                    _release(self._jdlpack_id)

                def __repr__(self):
                    return 'JavaTensor(device=%r)' % (self._jdlpack_device,)
            """;

    private static PythonRuntime instance;
    private static PythonUnavailableException failure;
    private static volatile LibPython lib;

    private final LibPython py;
    private final String description;
    private final MemorySegment guard;
    private final MemorySegment execFunction;
    private final MemorySegment evalFunction;
    private final MemorySegment getFunction;
    private final MemorySegment setFunction;
    private final MemorySegment capsuleOf;
    private final MemorySegment javaTensorClass;

    /**
     * The embedded interpreter, started by the first call.
     *
     * @return the runtime
     * @throws PythonUnavailableException if no embeddable Python was found; the message says what
     *                                    to install. Every later call throws the same.
     */
    public static synchronized PythonRuntime get() {
        if (instance == null && failure == null) {
            try {
                instance = new PythonRuntime(PythonLocation.probe(PythonLocation.executableFromEnvironment()));
            } catch (PythonUnavailableException e) {
                failure = e;
            } catch (RuntimeException | Error e) {
                failure = new PythonUnavailableException("embedding Python failed: " + e, e);
            }
        }
        if (failure != null) {
            throw failure;
        }
        return instance;
    }

    /** {@return the libpython bindings, for upcalls; set before the first upcall can run} */
    static LibPython lib() {
        return lib;
    }

    private PythonRuntime(PythonLocation location) {
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
        py = new LibPython(location.library());
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
            MemorySegment main = (MemorySegment) py.importAddModule.invokeExact(arena.allocateFrom("__main__"));
            MemorySegment mainDict = (MemorySegment) py.moduleGetDict.invokeExact(main);
            MemorySegment module = (MemorySegment) py.importAddModule.invokeExact(arena.allocateFrom("_jdlpack"));
            MemorySegment dict = (MemorySegment) py.moduleGetDict.invokeExact(module);
            MemorySegment builtins = (MemorySegment) py.dictGetItemString.invokeExact(mainDict, arena.allocateFrom("__builtins__"));
            int rc = (int) py.dictSetItemString.invokeExact(dict, arena.allocateFrom("__builtins__"), builtins);
            JavaTensors.install(py, dict);
            MemorySegment result = (MemorySegment) py.runString.invokeExact(arena.allocateFrom(BOOTSTRAP), LibPython.PY_FILE_INPUT,
                    dict, dict);
            if (rc != 0 || result.address() == 0) {
                py.errPrint.invokeExact();
                throw new IllegalStateException("the Python bootstrap of dlpack-python failed (traceback on stderr)");
            }
            py.decRef.invokeExact(result);
            guard = member(arena, dict, "_guard");
            execFunction = member(arena, dict, "_exec");
            evalFunction = member(arena, dict, "_eval");
            getFunction = member(arena, dict, "_get");
            setFunction = member(arena, dict, "_set");
            capsuleOf = member(arena, dict, "_capsule_of");
            javaTensorClass = member(arena, dict, "JavaTensor");
            if (started) {
                MemorySegment state = (MemorySegment) py.saveThread.invokeExact(); // let every thread take the GIL
                if (state.address() == 0) {
                    throw new IllegalStateException("PyEval_SaveThread returned NULL");
                }
            } else {
                py.gilRelease.invokeExact(hostGilState);
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        description = "Python " + location.version() + " (" + location.executable() + ", " + location.library() + ")";
    }

    /** A module-level object of {@code _jdlpack}, kept alive for the life of the process. */
    private MemorySegment member(Arena arena, MemorySegment dict, String name) throws Throwable {
        MemorySegment object = (MemorySegment) py.dictGetItemString.invokeExact(dict, arena.allocateFrom(name));
        if (object.address() == 0) {
            throw new IllegalStateException("the bootstrap did not define " + name);
        }
        py.incRef.invokeExact(object);
        return object;
    }

    /** {@return which Python this is: version, executable and libpython} */
    public String description() {
        return description;
    }

    /**
     * {@return how many Python references and Python producers' deleters were leaked because the
     * interpreter had been finalized when they were due}
     */
    public static long leakedAfterFinalization() {
        return Gil.LEAKED_AFTER_FINALIZATION.get();
    }

    /**
     * Runs Python statements in {@code __main__}.
     *
     * @param statements the source
     * @throws PythonException with the traceback, if they raise
     */
    public void exec(String statements) {
        Objects.requireNonNull(statements, "statements");
        Gil.call(py, arena -> {
            MemorySegment source = string(arena, statements);
            try {
                py.decRef.invokeExact(invoke(execFunction, source));
            } finally {
                py.decRef.invokeExact(source);
            }
            return null;
        });
    }

    /**
     * Evaluates a Python expression in {@code __main__}.
     *
     * @param expression the source
     * @return its value; close it when done
     * @throws PythonException with the traceback, if it raises
     */
    public PythonObject eval(String expression) {
        Objects.requireNonNull(expression, "expression");
        return Gil.call(py, arena -> {
            MemorySegment source = string(arena, expression);
            try {
                return new PythonObject(this, invoke(evalFunction, source));
            } finally {
                py.decRef.invokeExact(source);
            }
        });
    }

    /**
     * Evaluates a Python expression in {@code __main__} and returns {@code str()} of its value.
     *
     * @param expression the source
     * @return the string
     * @throws PythonException with the traceback, if it raises
     */
    public String evalString(String expression) {
        try (PythonObject value = eval(expression)) {
            return value.str();
        }
    }

    /**
     * Reads a global variable of {@code __main__}.
     *
     * @param name the variable
     * @return its value; close it when done
     * @throws PythonException if there is no such variable
     */
    public PythonObject get(String name) {
        Objects.requireNonNull(name, "name");
        return Gil.call(py, arena -> {
            MemorySegment key = string(arena, name);
            try {
                return new PythonObject(this, invoke(getFunction, key));
            } finally {
                py.decRef.invokeExact(key);
            }
        });
    }

    /**
     * Binds a global variable of {@code __main__} to an object (Python holds its own reference).
     *
     * @param name  the variable
     * @param value the object
     */
    public void set(String name, PythonObject value) {
        Objects.requireNonNull(name, "name");
        Gil.call(py, arena -> {
            MemorySegment key = string(arena, name);
            try {
                py.decRef.invokeExact(invoke(setFunction, key, value.pointer()));
            } finally {
                py.decRef.invokeExact(key);
            }
            return null;
        });
    }

    /**
     * Calls a Python callable with positional arguments.
     *
     * @param callable  the callable, e.g. {@code eval("np.from_dlpack")}
     * @param arguments the arguments
     * @return the result; close it when done
     * @throws PythonException with the traceback, if the call raises
     */
    public PythonObject call(PythonObject callable, PythonObject... arguments) {
        return Gil.call(py, arena -> {
            MemorySegment[] pointers = new MemorySegment[arguments.length];
            for (int i = 0; i < arguments.length; i++) {
                pointers[i] = arguments[i].pointer();
            }
            return new PythonObject(this, invoke(callable.pointer(), pointers));
        });
    }

    /**
     * Makes a Python object for a Java tensor, implementing {@code __dlpack__} and
     * {@code __dlpack_device__}: each {@code __dlpack__} call exports a fresh managed tensor from
     * {@code source} in a capsule (legacy when {@code max_version} is None or older than 1.0,
     * versioned otherwise). The Python object keeps {@code source} reachable until Python drops it.
     *
     * @param source the tensor
     * @return the object; close the Java reference when done (Python's own references keep it)
     */
    public PythonObject toPython(DLPackSource source) {
        DLDevice device = Objects.requireNonNull(source.device(), "source.device()");
        long id = JavaTensors.register(source);
        try {
            return Gil.call(py, arena -> {
                MemorySegment[] arguments = {(MemorySegment) py.longFromLongLong.invokeExact(id),
                        (MemorySegment) py.longFromLongLong.invokeExact((long) device.deviceType()),
                        (MemorySegment) py.longFromLongLong.invokeExact((long) device.deviceId())};
                try {
                    return new PythonObject(this, invoke(javaTensorClass, arguments));
                } finally {
                    for (MemorySegment argument : arguments) {
                        py.decRef.invokeExact(argument);
                    }
                }
            });
        } catch (RuntimeException | Error e) {
            JavaTensors.unregister(id);
            throw e;
        }
    }

    /**
     * Imports a Python tensor: calls {@code __dlpack__(max_version=(1, 3))}, or {@code __dlpack__()}
     * when the producer predates DLPack 1.0 and rejects {@code max_version} (a {@code TypeError}),
     * consumes the capsule (renamed {@code used_dltensor_versioned} / {@code used_dltensor}) and
     * imports the managed tensor, zero copy. An unconsumed DLPack capsule is accepted as it is.
     *
     * The tensor has the default lifetime, {@link ImportLifetime#CONFINED}: this thread reads it
     * and closes it.
     *
     * @param tensor an object with {@code __dlpack__}, or a DLPack capsule
     * @return the tensor; closing it calls the producer's deleter
     * @throws PythonException          if {@code __dlpack__} raises, or the object has none
     * @throws IllegalArgumentException if the result is not an unconsumed DLPack capsule
     * @throws org.jdlpack.abi.InvalidTensorException if the tensor is malformed (its deleter has run)
     */
    public ImportedTensor importTensor(PythonObject tensor) {
        return importTensor(tensor, ImportLifetime.CONFINED);
    }

    /**
     * Imports a Python tensor as {@link #importTensor(PythonObject)} does, with the given lifetime:
     * {@link ImportLifetime#SHARED} when another thread will close it (an Arrow vector made from it
     * is released by whichever thread drops the last buffer).
     *
     * @param tensor   an object with {@code __dlpack__}, or a DLPack capsule
     * @param lifetime who ends the tensor's life, and on which threads it may be used
     * @return the tensor; closing it calls the producer's deleter
     * @throws PythonException          if {@code __dlpack__} raises, or the object has none
     * @throws IllegalArgumentException if the result is not an unconsumed DLPack capsule
     * @throws org.jdlpack.abi.InvalidTensorException if the tensor is malformed (its deleter has run)
     */
    public ImportedTensor importTensor(PythonObject tensor, ImportLifetime lifetime) {
        Objects.requireNonNull(lifetime, "lifetime");
        Capsules.Taken taken = Gil.call(py, arena -> {
            MemorySegment capsule = invoke(capsuleOf, tensor.pointer());
            try {
                Capsules.Taken owned = Capsules.take(py, capsule);
                ForeignDeleterGuard.install(owned.kind(), owned.pointer());
                return owned;
            } finally {
                py.decRef.invokeExact(capsule);
            }
        });
        return importOwned(taken, lifetime); // without the GIL: a deleter called on a failed import takes it itself
    }

    /**
     * The one place this module hands a managed tensor it owns to dlpack-abi's import API (so that
     * a change of that API is adapted here alone).
     */
    private static ImportedTensor importOwned(Capsules.Taken taken, ImportLifetime lifetime) {
        return ManagedTensorHandle.of(taken.kind(), taken.pointer()).importTensor(lifetime);
    }

    /** {@code str(object)}. */
    String str(PythonObject object) {
        return Gil.call(py, arena -> {
            MemorySegment text = (MemorySegment) py.objectStr.invokeExact(object.pointer());
            if (text.address() == 0) {
                py.errClear.invokeExact();
                throw new PythonException("str() of the object raised");
            }
            try {
                return utf8(text);
            } finally {
                py.decRef.invokeExact(text);
            }
        });
    }

    private MemorySegment string(Arena arena, String value) throws Throwable {
        MemorySegment text = (MemorySegment) py.unicodeFromString.invokeExact(arena.allocateFrom(value));
        if (text.address() == 0) {
            py.errClear.invokeExact();
            throw new IllegalArgumentException("Python could not decode the string");
        }
        return text;
    }

    private String utf8(MemorySegment unicode) throws Throwable {
        MemorySegment chars = (MemorySegment) py.unicodeAsUtf8.invokeExact(unicode);
        if (chars.address() == 0) {
            py.errClear.invokeExact();
            return "(undecodable)";
        }
        return chars.reinterpret(Long.MAX_VALUE).getString(0);
    }

    /**
     * {@code _guard(callable, *arguments)} with the GIL held: the new reference to the result, or
     * a {@link PythonException} with the traceback. Arguments are borrowed.
     */
    private MemorySegment invoke(MemorySegment callable, MemorySegment... arguments) throws Throwable {
        MemorySegment tuple = (MemorySegment) py.tupleNew.invokeExact((long) arguments.length + 1);
        if (tuple.address() == 0) {
            py.errClear.invokeExact();
            throw new OutOfMemoryError("PyTuple_New failed");
        }
        py.incRef.invokeExact(callable);
        int rc = (int) py.tupleSetItem.invokeExact(tuple, 0L, callable); // steals the reference
        for (int i = 0; i < arguments.length; i++) {
            py.incRef.invokeExact(arguments[i]);
            rc |= (int) py.tupleSetItem.invokeExact(tuple, (long) i + 1, arguments[i]);
        }
        MemorySegment result = rc != 0 ? MemorySegment.NULL : (MemorySegment) py.callObject.invokeExact(guard, tuple);
        py.decRef.invokeExact(tuple);
        if (result.address() == 0) {
            py.errClear.invokeExact();
            throw new IllegalStateException("calling into Python failed before any Python code ran");
        }
        try {
            MemorySegment ok = (MemorySegment) py.tupleGetItem.invokeExact(result, 0L);
            MemorySegment value = (MemorySegment) py.tupleGetItem.invokeExact(result, 1L);
            if ((int) py.objectIsTrue.invokeExact(ok) == 1) {
                py.incRef.invokeExact(value);
                return value;
            }
            throw new PythonException(utf8(value));
        } finally {
            py.decRef.invokeExact(result);
        }
    }
}
