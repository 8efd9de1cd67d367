package org.jdlpack.python;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Objects;

import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.python.internal.bridge.Capsules;
import org.jdlpack.python.internal.bridge.ExchangeImports;
import org.jdlpack.python.internal.bridge.ForeignDeleterGuard;
import org.jdlpack.python.internal.bridge.JavaTensorArguments;
import org.jdlpack.python.internal.capi.Gil;
import org.jdlpack.python.internal.capi.LibPythonObjects;
import org.jdlpack.python.internal.objects.PythonError;

/**
 * CPython embedded in this JVM through FFM downcalls into libpython: no JNI, no bridge library.
 *
 * {@snippet :
 * PythonRuntime python = PythonRuntime.get();                   // starts the interpreter once per process
 * python.exec("import numpy as np");
 *
 * // A NumPy array into Java, zero copy: closing the tensor calls NumPy's deleter.
 * try (PythonObject array = python.eval("np.arange(6.0).reshape(2, 3)");
 *      ImportedTensor tensor = python.importTensor(array)) {
 *     double last = HostTensorView.of(tensor).getDoubleAt(1, 2);  // 5.0: row 1, column 2
 * }
 *
 * // A Java tensor into NumPy, zero copy: np.from_dlpack calls its __dlpack__.
 * try (OwnedHostTensor tensor = OwnedHostTensor.copyOf(new float[] {1, 2, 3}, 3);
 *      PythonObject x = python.toPython(DLPackSource.of(tensor));
 *      PythonObject sum = python.eval("lambda t, scale: float(np.from_dlpack(t).sum()) * scale");
 *      PythonObject result = python.call(sum, x, 2)) {             // Java values become Python ones
 *     double total = result.toDouble();                            // 12.0
 * }
 * }
 *
 * <p><b>Which Python.</b> The first call chooses the interpreter, once per process:
 * {@link #get(Path)} names a {@code python3}; {@link #get()} takes the one named by the system
 * property {@code org.jdlpack.python}, else by the environment variable {@code JDLPACK_PYTHON},
 * else the {@code python3} on PATH. That {@code python3} is asked (through {@code sysconfig}) for
 * its shared libpython, which is loaded with {@code RTLD_GLOBAL} so that extension modules (NumPy,
 * PyTorch) resolve its symbols. One interpreter lives per process, and it is never finalized by
 * jdlpack: a later {@code get(python3)} naming another Python throws. If the process already runs
 * an initialized interpreter from that library, it is used as it is.
 *
 * <p><b>Tensors.</b> {@link #toPython(DLPackSource)} makes a Python object implementing the array
 * API's {@code __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)} and
 * {@code __dlpack_device__()}, so that {@code np.from_dlpack(x)} and {@code torch.from_dlpack(x)}
 * take Java tensors directly. {@link #importTensor(PythonObject)} imports any object with
 * {@code __dlpack__} (or an unconsumed DLPack capsule) into an {@link ImportedTensor}, zero copy.
 *
 * <p><b>The GIL.</b> Every method takes the GIL for its own duration and releases it before
 * returning; it is never held while control is in user code. Python code may start threads and
 * call back into Java tensors' {@code __dlpack__} from them. While the GIL is held, only native
 * calls and Java code that cannot block run, so a virtual thread never unmounts (and resumes on
 * another carrier) while its carrier holds Python's per-thread state.
 *
 * <p><b>Native access.</b> On the module path, pass
 * {@code --enable-native-access=org.jdlpack.abi,org.jdlpack.cpu,org.jdlpack.python}; on the class
 * path {@code --enable-native-access=ALL-UNNAMED}. Without it the JDK warns, or, with
 * {@code --illegal-native-access=deny}, every call here throws an {@link IllegalCallerException}
 * naming the flag.
 *
 * <p><b>Lifetime.</b> The runtime lives until the process ends. If whoever embeds Python finalizes
 * the interpreter, later calls throw {@link IllegalStateException}, and cleanups that would touch
 * Python (dropping a {@link PythonObject}, a Python producer's deleter) leak instead and are
 * counted in {@link #leakedAfterFinalization()}.
 *
 * <p>Thread safety: every method may be called from any thread, virtual threads included, and
 * concurrently; calls run one at a time in Python (the GIL).
 *
 * @since 0.1
 */
public final class PythonRuntime {

    private static PythonRuntime instance;
    /** The failure of the first start, and what it asked for: every later call for that Python throws it. */
    private static RuntimeException failure;
    private static String failedRequest;

    private final Interpreter interpreter;
    private final GuardedCalls calls;
    private final PythonLocation location;
    private final String description;

    /**
     * The embedded interpreter, started by the first call with the {@code python3} named by the
     * system property {@code org.jdlpack.python}, else by {@code $JDLPACK_PYTHON}, else the one on
     * PATH; every later call returns the same runtime, whichever Python it runs.
     *
     * @return the runtime
     * @throws PythonUnavailableException if no embeddable Python was found; the message says what
     *                                    to install. Every later call throws the same.
     * @throws IllegalCallerException     if native access is denied to this module; the message
     *                                    names the flag. Every later call throws the same.
     */
    public static synchronized PythonRuntime get() {
        if (instance != null) {
            return instance;
        }
        return start(PythonLocation.chosenExecutable());
    }

    /**
     * The embedded interpreter of the given {@code python3}, started by the first call; a later
     * call must name the same Python (the same path, or one resolving to the same executable).
     *
     * {@snippet :
     * PythonRuntime python = PythonRuntime.get(Path.of("/opt/venvs/torch/bin/python3"));
     * }
     *
     * @param python3 the Python executable whose libpython to embed (a virtual environment's
     *                {@code python3} works: its packages are on the path)
     * @return the runtime
     * @throws IllegalStateException      if the process already runs another Python (the message
     *                                    names both); one interpreter lives per process
     * @throws PythonUnavailableException if that Python cannot be embedded; the message says why
     * @throws IllegalCallerException     if native access is denied to this module; the message
     *                                    names the flag
     */
    public static synchronized PythonRuntime get(Path python3) {
        String requested = Objects.requireNonNull(python3, "python3").toString();
        if (instance != null) {
            if (!instance.location.isNamedBy(requested)) {
                throw new IllegalStateException("this process already runs " + instance.description + ", so it cannot embed "
                        + requested + " too: one interpreter lives per process. Name the same python3 in every "
                        + "PythonRuntime.get(Path) call, or use PythonRuntime.get()");
            }
            return instance;
        }
        return start(requested);
    }

    private static PythonRuntime start(String requested) {
        if (failure != null && (requested.equals(failedRequest) || failure instanceof IllegalCallerException
                || !(failure instanceof PythonUnavailableException unavailable && unavailable.nothingLoaded()))) {
            throw failure; // the same request, or a start that went as far as loading libpython
        }
        try {
            Interpreter.requireNativeAccess(); // first: without it nothing here can work
            PythonLocation location = PythonLocation.probe(requested);
            instance = new PythonRuntime(location);
            failure = null;
            return instance;
        } catch (PythonUnavailableException | IllegalCallerException e) {
            failure = e;
        } catch (RuntimeException | Error e) {
            failure = new PythonUnavailableException("embedding Python failed: " + e, e);
        }
        failedRequest = requested;
        throw failure;
    }

    private PythonRuntime(PythonLocation location) {
        interpreter = Interpreter.start(location);
        calls = new GuardedCalls(interpreter.guard);
        this.location = location;
        description = "Python " + location.version() + " (" + location.executable() + ", " + location.library() + ")";
    }

    /** {@return the Python executable, version and libpython this runtime embeds} */
    PythonLocation location() {
        return location;
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
        Gil.call(arena -> {
            LibPythonObjects.decRef(calls.invokeWithString(arena, interpreter.execFunction, statements));
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
        return PythonObject.adopt(Gil.call(arena -> calls.invokeWithString(arena, interpreter.evalFunction, expression)));
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
        return PythonObject.adopt(Gil.call(arena -> calls.invokeWithString(arena, interpreter.getFunction, name)));
    }

    /**
     * Binds a global variable of {@code __main__} to an object (Python holds its own reference).
     *
     * @param name  the variable
     * @param value the object
     */
    public void set(String name, PythonObject value) {
        Objects.requireNonNull(name, "name");
        Gil.call(arena -> {
            LibPythonObjects.decRef(calls.invokeWithString(arena, interpreter.setFunction, name, value.pointer()));
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
        return call(callable, (Object[]) arguments);
    }

    /**
     * Calls a Python callable with positional arguments given as Java values: {@code long},
     * {@code int}, {@code short} and {@code byte} become Python {@code int}s, {@code double} and
     * {@code float} Python {@code float}s, {@code boolean} {@code True} or {@code False},
     * {@code String} a {@code str}, {@code null} {@code None}, a {@link DLPackSource} the object
     * {@link #toPython(DLPackSource)} makes (Python's references keep it, and its source, as long as
     * they live), and a {@link PythonObject} is passed as it is. The arguments are made, the call
     * made and the arguments dropped in one GIL entry: tensors passed as sources cost no GIL entry
     * of their own, where each {@code toPython} and each {@code close} of its result is one.
     *
     * {@snippet :
     * try (PythonObject full = python.eval("np.full");
     *      PythonObject array = python.call(full, 3, 0.5)) {          // np.full(3, 0.5)
     *     ...
     * }
     * try (OwnedHostTensor x = pool.take(DLDataType.FLOAT32, rows, 16);
     *      PythonObject ignored = python.call(normalizeInPlace, DLPackSource.of(x))) { // np.from_dlpack inside
     *     ...
     * }
     * }
     *
     * @param callable  the callable
     * @param arguments the arguments
     * @return the result; close it when done
     * @throws IllegalArgumentException if an argument is of another type (the message names it);
     *                                  nothing has run in Python then
     * @throws PythonException          with the traceback, if the call raises
     */
    public PythonObject call(PythonObject callable, Object... arguments) {
        Objects.requireNonNull(callable, "callable");
        CallArguments.check(arguments, DLPackSource.class::isInstance);
        JavaTensorArguments tensors = JavaTensorArguments.register(arguments); // null if none
        try {
            return PythonObject.adopt(Gil.call(arena -> {
                MemorySegment[] objects = new MemorySegment[arguments.length];
                try {
                    for (int i = 0; i < arguments.length; i++) {
                        objects[i] = tensors != null && tensors.isTensor(i)
                                ? tensors.newObject(i)
                                : CallArguments.toPython(arena, arguments[i]);
                    }
                    return calls.invoke(callable.pointer(), objects);
                } finally {
                    for (MemorySegment object : objects) {
                        if (object != null) {
                            LibPythonObjects.decRef(object); // a Java tensor's drops its registration, unless Python kept it
                        }
                    }
                }
            }));
        } catch (RuntimeException | Error e) {
            if (tensors != null) {
                tensors.dropUnmade();
            }
            throw e;
        }
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
        Objects.requireNonNull(source.device(), "source.device()");
        JavaTensorArguments tensor = JavaTensorArguments.register(new Object[] {source});
        MemorySegment object;
        try {
            object = Gil.call(arena -> tensor.newObject(0));
        } catch (RuntimeException | Error e) {
            tensor.dropUnmade(); // if the GIL was never taken
            throw e;
        }
        return PythonObject.adopt(object);
    }

    /**
     * Imports a Python tensor, zero copy, by the fastest way its type offers:
     * <ol>
     *   <li>the DLPack 1.3 C exchange API, when the object's type has a usable table in
     *       {@code __dlpack_c_exchange_api__} (version major 1, {@code managed_tensor_from_py_object_no_sync}
     *       not NULL; checked once per type): one C call, no Python code (Java tensors, PyTorch
     *       2.10 and later). A tensor on a device other than the CPU is given back and taken
     *       through {@code __dlpack__}, whose {@code stream=None} makes the producer order its
     *       work first, which the exchange API leaves to the consumer;</li>
     *   <li>else {@code __dlpack__(max_version=(1, 3))}, or {@code __dlpack__()} when the producer
     *       predates DLPack 1.0 and rejects {@code max_version} (a {@code TypeError}); the capsule
     *       is consumed (renamed {@code used_dltensor_versioned} / {@code used_dltensor}). An
     *       unconsumed DLPack capsule is accepted as it is.</li>
     * </ol>
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
     * {@link ImportLifetime#SHARED} when another thread will use or close it. To hand the tensor to
     * an owner that takes it (an Arrow vector, an ONNX Runtime input), keep the default: the owner
     * moves it ({@link ImportedTensor#moveTo}), and a confined tensor moves without the JVM-wide
     * handshake a shared one costs.
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
        Capsules.Taken taken;
        try {
            taken = Gil.call(arena -> {
                MemorySegment object = tensor.pointer();
                Capsules.Taken exchanged = ExchangeImports.tryTake(arena, object);
                if (exchanged != null) {
                    return exchanged;
                }
                MemorySegment capsule = calls.invoke(interpreter.capsuleOf, object);
                try {
                    return Capsules.take(capsule);
                } finally {
                    LibPythonObjects.decRef(capsule);
                }
            });
        } catch (PythonError producerFailed) {
            // a producer's exchange API raised
            throw new PythonException(producerFailed.getMessage(), producerFailed.exception());
        }
        // Without the GIL: a deleter called on a failed import takes the GIL itself, and the guard
        // writes a concurrent map.
        ImportedTensor imported = ImportedTensor.of(taken.kind(), taken.pointer(), lifetime);
        if (!taken.jdlpackDeleter()) {
            ForeignDeleterGuard.installOrClose(imported);
        }
        return imported;
    }
}
