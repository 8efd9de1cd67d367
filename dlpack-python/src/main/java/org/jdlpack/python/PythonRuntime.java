package org.jdlpack.python;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;

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
 * call back into Java tensors' {@code __dlpack__} from them. While the GIL is held, only native
 * calls and Java code that cannot block run, so a virtual thread never unmounts (and resumes on
 * another carrier) while its carrier holds Python's per-thread state.
 *
 * <p><b>Lifetime.</b> The runtime lives until the process ends. If whoever embeds Python finalizes
 * the interpreter, later calls throw {@link IllegalStateException}, and cleanups that would touch
 * Python (dropping a {@link PythonObject}, a Python producer's deleter) leak instead and are
 * counted in {@link #leakedAfterFinalization()}.
 *
 * <p>Thread safety: every method may be called from any thread, virtual threads included, and
 * concurrently; calls run one at a time in Python (the GIL).
 */
public final class PythonRuntime {

    private static PythonRuntime instance;
    private static PythonUnavailableException failure;

    private final LibPython py;
    private final Interpreter interpreter;
    private final GuardedCalls calls;
    private final String description;

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
        return Interpreter.lib();
    }

    private PythonRuntime(PythonLocation location) {
        interpreter = Interpreter.start(location);
        py = interpreter.py;
        calls = new GuardedCalls(py, interpreter.guard);
        description = "Python " + location.version() + " (" + location.executable() + ", " + location.library() + ")";
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
            py.decRef.invokeExact(calls.invokeWithString(arena, interpreter.execFunction, statements));
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
        return PythonObject.adopt(this, Gil.call(py, arena -> calls.invokeWithString(arena, interpreter.evalFunction, expression)));
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
        return PythonObject.adopt(this, Gil.call(py, arena -> calls.invokeWithString(arena, interpreter.getFunction, name)));
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
            py.decRef.invokeExact(calls.invokeWithString(arena, interpreter.setFunction, name, value.pointer()));
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
        return PythonObject.adopt(this, Gil.call(py, arena -> {
            MemorySegment[] pointers = new MemorySegment[arguments.length];
            for (int i = 0; i < arguments.length; i++) {
                pointers[i] = arguments[i].pointer();
            }
            return calls.invoke(callable.pointer(), pointers);
        }));
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
        long id = JavaTensors.register(source); // before the GIL: a concurrent map write may block
        MemorySegment object;
        try {
            object = Gil.call(py, arena -> {
                // From here the capsule owns the registration: dropping it (here on a failure, or
                // with the JavaTensor) unregisters.
                MemorySegment registration = JavaTensors.registration(py, id);
                if (registration.address() == 0) {
                    throw new OutOfMemoryError("PyCapsule_New failed for a JavaTensor registration");
                }
                MemorySegment[] arguments = {registration, (MemorySegment) py.longFromLongLong.invokeExact((long) device.deviceType()),
                        (MemorySegment) py.longFromLongLong.invokeExact((long) device.deviceId())};
                try {
                    return calls.invoke(interpreter.javaTensorFactory, arguments);
                } finally {
                    for (MemorySegment argument : arguments) {
                        py.decRef.invokeExact(argument);
                    }
                }
            });
        } catch (RuntimeException | Error e) {
            JavaTensors.unregister(id); // when no capsule was made; otherwise its destructor did already
            throw e;
        }
        return PythonObject.adopt(this, object);
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
            MemorySegment capsule = calls.invoke(interpreter.capsuleOf, tensor.pointer());
            try {
                return Capsules.take(py, capsule);
            } finally {
                py.decRef.invokeExact(capsule);
            }
        });
        // Without the GIL: the guard writes a concurrent map, and a deleter called on a failed
        // import takes the GIL itself. The tensor is ours alone now (the capsule is renamed used_).
        try {
            ForeignDeleterGuard.install(taken.kind(), taken.pointer());
        } catch (RuntimeException | Error e) {
            ImportedTensor.discard(taken.kind(), taken.pointer()); // the producer's own deleter, still in place
            throw e;
        }
        return ImportedTensor.of(taken.kind(), taken.pointer(), lifetime);
    }

    /** {@code str(object)}. */
    String str(PythonObject object) {
        return Gil.call(py, arena -> calls.str(object.pointer()));
    }
}
