package org.jdlpack.python;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A strong reference to a Python object, owned by Java: {@link #close()} drops it (under the GIL).
 * A reference that becomes unreachable without being closed is dropped by a Cleaner; one whose
 * interpreter was finalized meanwhile is leaked and counted
 * ({@link PythonRuntime#leakedAfterFinalization()}).
 *
 * <p>Thread safety: may be used from any thread, virtual threads included (every use takes the
 * GIL), but must not be closed while another thread is still passing it to Python.
 */
public final class PythonObject implements AutoCloseable {

    private static final Cleaner CLEANER = Cleaner.create();

    private final PythonRuntime runtime;
    private final MemorySegment object;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Cleaner.Cleanable cleanable;

    /**
     * Takes over a new reference, without the GIL: the Cleaner registration takes a lock, which may
     * unmount a virtual thread (see {@link Gil}). If the wrapping fails, the reference is dropped
     * again under the GIL.
     */
    static PythonObject adopt(PythonRuntime runtime, MemorySegment object) {
        try {
            return new PythonObject(runtime, object);
        } catch (RuntimeException | Error e) {
            LibPython py = PythonRuntime.lib();
            Gil.cleanup(py, arena -> {
                py.decRef.invokeExact(object);
                return null;
            });
            throw e;
        }
    }

    private PythonObject(PythonRuntime runtime, MemorySegment object) {
        this.runtime = runtime;
        this.object = object;
        LibPython py = PythonRuntime.lib();
        this.cleanable = CLEANER.register(this, () -> Gil.cleanup(py, arena -> {
            py.decRef.invokeExact(object);
            return null;
        }));
    }

    /** {@return the {@code PyObject*}, borrowed; only while open} */
    MemorySegment pointer() {
        if (closed.get()) {
            throw new IllegalStateException("PythonObject already closed");
        }
        return object;
    }

    /** {@return Python's {@code str()} of the object} */
    public String str() {
        return runtime.str(this);
    }

    /**
     * Drops the reference.
     *
     * @throws IllegalStateException if already closed
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            throw new IllegalStateException("PythonObject already closed");
        }
        cleanable.clean();
    }

    @Override
    public String toString() {
        return closed.get() ? "PythonObject[closed]" : "PythonObject[0x" + Long.toHexString(object.address()) + "]";
    }
}
