package org.jdlpack.python;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jdlpack.abi.plumbing.Ledger;
import org.jdlpack.python.internal.capi.Gil;
import org.jdlpack.python.internal.capi.LibPythonObjects;
import org.jdlpack.python.internal.objects.PythonStrings;

/**
 * A strong reference to a Python object, owned by Java: {@link #close()} drops it (under the GIL).
 * Results of {@link PythonRuntime} calls are {@code PythonObject}s; read them into Java values
 * with {@link #toLong()}, {@link #toDouble()}, {@link #toBoolean()} and {@link #str()}, or pass
 * them back to Python.
 *
 * {@snippet :
 * try (PythonObject total = python.eval("int(np.arange(10).sum())")) {
 *     long sum = total.toLong();                         // 45
 * }
 * try (PythonObject isClose = python.eval("np.isclose");
 *      PythonObject yes = python.call(isClose, 1.0, 1.0 + 1e-12)) {
 *     boolean close = yes.toBoolean();                   // true: numpy.bool_, read as Python's bool()
 * }
 * }
 *
 * <p><b>Forgotten references.</b> A {@code PythonObject} that becomes unreachable without being
 * closed is found by jdlpack's safety net after garbage collection: its reference is dropped then
 * (under the GIL, on the safety net's thread) and it is reported as a leak, like a forgotten
 * imported tensor (logged, rate-limited, and counted in {@code DLPackStats.leaksReported()};
 * {@code -Dorg.jdlpack.leakTracking=true} records where it was made). It counts as a leak because
 * the Python object lived until a collection happened to run, which may hold memory, files or a
 * tensor's deleter for much longer than the code meant. One whose interpreter was finalized
 * meanwhile is not dropped but counted in {@link PythonRuntime#leakedAfterFinalization()}.
 *
 * <p>Thread safety: may be used from any thread, virtual threads included (every use takes the
 * GIL), but must not be closed while another thread is still passing it to Python.
 *
 * @since 0.1
 */
public final class PythonObject implements AutoCloseable {

    private final MemorySegment object;
    private final Watch watch;

    /**
     * Takes over a new reference, without the GIL: the ledger registration takes a lock, which
     * may unmount a virtual thread (see {@link Gil}). If the wrapping fails, the reference is
     * dropped again under the GIL.
     */
    static PythonObject adopt(MemorySegment object) {
        try {
            return new PythonObject(object);
        } catch (RuntimeException | Error e) {
            Gil.cleanup(arena -> {
                LibPythonObjects.decRef(object);
                return null;
            });
            throw e;
        }
    }

    private PythonObject(MemorySegment object) {
        this.object = object;
        this.watch = new Watch(this, object.address());
    }

    /** {@return the {@code PyObject*}, borrowed; only while open} */
    MemorySegment pointer() {
        if (watch.closed.get()) {
            throw new IllegalStateException("PythonObject already closed: " + this);
        }
        return object;
    }

    /** {@return Python's {@code str()} of the object} */
    public String str() {
        try {
            String text = Gil.call(arena -> PythonStrings.str(pointer()));
            if (text == null) {
                throw new PythonException("str() of the object raised");
            }
            return text;
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * {@return the object as a {@code long}, as Python's {@code operator.index(x)} reads it: an
     * {@code int}, a {@code bool}, a NumPy integer; never a {@code float}}
     *
     * @throws PythonException       if Python refuses, its last line Python's
     *                               ({@code TypeError: 'float' object cannot be interpreted as an integer},
     *                               {@code OverflowError: ...} for an integer outside 64 bits)
     * @throws IllegalStateException if closed
     */
    public long toLong() {
        try {
            return Gil.call(arena -> PythonValues.toLong(pointer()));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * {@return the object as a {@code double}, as Python's {@code float(x)} reads a number: a
     * {@code float}, an {@code int}, a NumPy scalar; never a {@code str}}
     *
     * @throws PythonException       if Python refuses ({@code TypeError: must be real number, not str})
     * @throws IllegalStateException if closed
     */
    public double toDouble() {
        try {
            return Gil.call(arena -> PythonValues.toDouble(pointer()));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * {@return the object's truth value, as Python's {@code bool(x)} gives it: {@code True} and
     * {@code False}, {@code numpy.bool_}, and anything else Python can test}
     *
     * @throws PythonException       if Python refuses (a NumPy array of several elements:
     *                               {@code ValueError: The truth value of an array ... is ambiguous})
     * @throws IllegalStateException if closed
     */
    public boolean toBoolean() {
        try {
            return Gil.call(arena -> PythonValues.toBoolean(pointer()));
        } finally {
            Reference.reachabilityFence(this);
        }
    }

    /**
     * Drops the reference.
     *
     * @throws IllegalStateException if already closed
     */
    @Override
    public void close() {
        try {
            if (!watch.closed.compareAndSet(false, true)) {
                throw new IllegalStateException("PythonObject already closed: " + this);
            }
            watch.end();
            Gil.cleanup(arena -> {
                LibPythonObjects.decRef(object);
                return null;
            });
        } finally {
            Reference.reachabilityFence(this); // the ledger watches this object
        }
    }

    @Override
    public String toString() {
        return watch.closed.get() ? "PythonObject[closed]" : "PythonObject[0x" + Long.toHexString(object.address()) + "]";
    }

    /**
     * The ledger's entry for one reference: it watches the {@code PythonObject}, and holds the
     * address and the closed state (never the object itself, which the safety net must see die).
     */
    private static final class Watch extends Ledger.Entry {

        final AtomicBoolean closed = new AtomicBoolean();
        private final long address;

        Watch(PythonObject owner, long address) {
            super(owner);
            this.address = address;
            open();
        }

        void end() {
            settle();
        }

        @Override
        protected void forgotten() {
            if (!closed.compareAndSet(false, true)) {
                return; // closed meanwhile
            }
            settle();
            Gil.cleanup(arena -> {
                LibPythonObjects.decRef(MemorySegment.ofAddress(address));
                return null;
            });
            Ledger.reportLeak(describe(), creationSite());
        }

        @Override
        protected String describe() {
            return "a PythonObject (PyObject* 0x" + Long.toHexString(address) + ")";
        }
    }
}
