package org.jdlpack.python;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandles;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.ManagedTensorHandle;
import org.jdlpack.abi.ManagedTensorKind;

/**
 * The Java side of the Python {@code JavaTensor} objects: a table of the {@link DLPackSource}s that
 * live Python objects stand for, and the two built-in functions the Python class calls,
 * {@code _jdlpack_dlpack(id, versioned, stream, copy)} and {@code _jdlpack_release(id)}, each a
 * {@code PyCFunction} (METH_FASTCALL) whose C function is an FFM upcall stub.
 *
 * <p>The upcalls run on the calling Python thread with the GIL held. Java code in an upcall has a
 * native frame below it, so a virtual thread running it is pinned to its carrier: it cannot
 * unmount and resume elsewhere, and the thread state Python made current for that OS thread stays
 * the one this code runs under. {@code _jdlpack_dlpack} releases the GIL
 * ({@code PyEval_SaveThread}) while the source exports (Java code that may block), and takes it back
 * ({@code PyEval_RestoreThread}, on the same carrier because of the pinning) only to build the
 * capsule. No exception leaves an upcall: each becomes a Python exception.
 *
 * <p>Thread safety: the table is concurrent; upcalls may run on any thread.
 */
@SuppressWarnings("restricted")
final class JavaTensors {

    /** {@code PyMethodDef}: ml_name, ml_meth, ml_flags, ml_doc. */
    private static final StructLayout METHOD_DEF = MemoryLayout.structLayout(ADDRESS.withName("ml_name"),
            ADDRESS.withName("ml_meth"), JAVA_INT.withName("ml_flags"), MemoryLayout.paddingLayout(4), ADDRESS.withName("ml_doc"));
    private static final FunctionDescriptor FASTCALL = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG);

    private static final Map<Long, DLPackSource> LIVE = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_ID = new AtomicLong(1);
    // Python keeps pointers to the method definitions for the life of the process. Made with the
    // class, before Python runs: stubs are Java work that may block, which must not run under the GIL.
    private static final MemorySegment DLPACK_DEF = methodDef("_jdlpack_dlpack", "dlpack");
    private static final MemorySegment RELEASE_DEF = methodDef("_jdlpack_release", "release");

    private JavaTensors() {
    }

    /** {@return an id for a new Python object standing for {@code source}} */
    static long register(DLPackSource source) {
        long id = NEXT_ID.getAndIncrement();
        LIVE.put(id, source);
        return id;
    }

    /** Drops a registration whose Python object was never made. */
    static void unregister(long id) {
        LIVE.remove(id);
    }

    /** {@return how many Java tensor objects Python holds} */
    static int live() {
        return LIVE.size();
    }

    /** Defines the two built-in functions in {@code dict}. Needs the GIL; only downcalls. */
    static void install(LibPython py, MemorySegment dict) throws Throwable {
        define(py, dict, DLPACK_DEF);
        define(py, dict, RELEASE_DEF);
    }

    private static void define(LibPython py, MemorySegment dict, MemorySegment def) throws Throwable {
        MemorySegment name = def.get(ADDRESS, 0);
        MemorySegment function = (MemorySegment) py.cFunctionNew.invokeExact(def, MemorySegment.NULL);
        if (function.address() == 0) {
            py.errPrint.invokeExact();
            throw new IllegalStateException("PyCFunction_New failed for a _jdlpack built-in");
        }
        int rc = (int) py.dictSetItemString.invokeExact(dict, name, function);
        py.decRef.invokeExact(function);
        if (rc != 0) {
            throw new IllegalStateException("PyDict_SetItemString failed for a _jdlpack built-in");
        }
    }

    /** A {@code PyMethodDef} in global memory for the upcall target {@code javaName}. */
    private static MemorySegment methodDef(String pythonName, String javaName) {
        MemorySegment stub = UpcallStubs.of(MethodHandles.lookup(), javaName, FASTCALL);
        MemorySegment def = Arena.global().allocate(METHOD_DEF);
        def.set(ADDRESS, 0, Arena.global().allocateFrom(pythonName));
        def.set(ADDRESS, 8, stub);
        def.set(JAVA_INT, 16, LibPython.METH_FASTCALL);
        def.set(ADDRESS, 24, MemorySegment.NULL);
        return def;
    }

    /** {@code _jdlpack_dlpack(id, versioned, stream, copy)}: a new capsule, or NULL with an exception set. */
    @SuppressWarnings("unused") // the upcall target
    private static MemorySegment dlpack(MemorySegment self, MemorySegment args, long nargs) {
        try {
            return exportOrRaise(args, nargs);
        } catch (Throwable t) {
            // Building the Python exception itself failed (a source whose messages throw, no memory,
            // no stack): Python then reports "error return without exception set". Nothing may leave an upcall.
            return MemorySegment.NULL;
        }
    }

    private static MemorySegment exportOrRaise(MemorySegment args, long nargs) throws Throwable {
        LibPython py = PythonRuntime.lib();
        try {
            if (nargs != 4) {
                return raise(py, py.runtimeError, "_jdlpack_dlpack takes 4 arguments, not " + nargs);
            }
            MemorySegment arguments = args.reinterpret(nargs * ADDRESS.byteSize());
            long id = (long) py.longAsLongLong.invokeExact(arguments.getAtIndex(ADDRESS, 0));
            boolean versioned = (int) py.objectIsTrue.invokeExact(arguments.getAtIndex(ADDRESS, 1)) == 1;
            MemorySegment streamObject = arguments.getAtIndex(ADDRESS, 2);
            Long stream = streamObject.equals(py.none) ? null : (Long) (long) py.longAsLongLong.invokeExact(streamObject);
            long copyCode = (long) py.longAsLongLong.invokeExact(arguments.getAtIndex(ADDRESS, 3));
            if (((MemorySegment) py.errOccurred.invokeExact()).address() != 0) {
                return MemorySegment.NULL; // a conversion failed; its TypeError or OverflowError stands
            }
            DLPackSource source = LIVE.get(id);
            if (source == null) {
                return raise(py, py.bufferError, "the Java tensor behind this object was released");
            }
            ExportRequest request = new ExportRequest(versioned ? ManagedTensorKind.VERSIONED : ManagedTensorKind.LEGACY, stream,
                    copyCode < 0 ? null : copyCode == 1);
            ManagedTensorHandle handle = null;
            MemorySegment pointer = null;
            RuntimeException refused = null;
            Throwable failed = null;
            // Java code runs without the GIL: the export may block, and other Python threads may run meanwhile.
            MemorySegment thread = (MemorySegment) py.saveThread.invokeExact();
            try {
                handle = source.export(request);
                pointer = handle.consume(); // the capsule owns it from here
            } catch (IllegalArgumentException | UnsupportedOperationException | IllegalStateException e) {
                refused = e;
            } catch (Throwable t) {
                failed = t;
            }
            if (pointer == null && handle != null) {
                handle.close(); // an export that was made but could not be handed over (never expected)
            }
            py.restoreThread.invokeExact(thread); // the same carrier: this upcall pins a virtual thread
            if (refused != null) {
                return raise(py, py.bufferError, refused.getMessage());
            }
            if (failed != null || handle == null || pointer == null) {
                return raise(py, py.runtimeError, "the Java tensor's export failed: " + failed);
            }
            return Capsules.wrap(py, handle.kind(), pointer);
        } catch (Throwable t) {
            return raise(py, py.runtimeError, t.toString());
        }
    }

    /** {@code _jdlpack_release(id)}: the Python object is gone; returns None. */
    @SuppressWarnings("unused") // the upcall target
    private static MemorySegment release(MemorySegment self, MemorySegment args, long nargs) {
        try {
            return releaseOrRaise(args, nargs);
        } catch (Throwable t) {
            return MemorySegment.NULL; // as in dlpack: nothing may leave an upcall
        }
    }

    private static MemorySegment releaseOrRaise(MemorySegment args, long nargs) throws Throwable {
        LibPython py = PythonRuntime.lib();
        try {
            if (nargs != 1) {
                return raise(py, py.runtimeError, "_jdlpack_release takes 1 argument, not " + nargs);
            }
            long id = (long) py.longAsLongLong.invokeExact(args.reinterpret(ADDRESS.byteSize()).getAtIndex(ADDRESS, 0));
            LIVE.remove(id);
            py.incRef.invokeExact(py.none);
            return py.none;
        } catch (Throwable t) {
            return raise(py, py.runtimeError, t.toString());
        }
    }

    /** Sets a Python exception and returns NULL; never throws. */
    private static MemorySegment raise(LibPython py, MemorySegment type, String message) {
        try (Arena arena = Arena.ofConfined()) {
            py.errSetString.invokeExact(type, arena.allocateFrom(message == null ? "(no message)" : message));
        } catch (Throwable t) {
            try {
                System.getLogger("org.jdlpack.python").log(System.Logger.Level.ERROR, "could not raise a Python exception", t);
            } catch (Throwable ignored) {
                // Never throws, not even when logging fails.
            }
        }
        return MemorySegment.NULL;
    }
}
