package org.jdlpack.python.internal.bridge;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.util.Arrays;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.plumbing.Diagnostics;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.ExportRequest;
import org.jdlpack.python.internal.capi.EmbeddedPython;
import org.jdlpack.python.internal.capi.LibPythonCapsules;
import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonGil;
import org.jdlpack.python.internal.capi.LibPythonObjects;
import org.jdlpack.python.internal.capi.LibPythonTypes;
import org.jdlpack.python.internal.objects.FastcallArguments;
import org.jdlpack.python.internal.objects.PythonErrors;

/**
 * The Java side of the Python {@code JavaTensor} objects ({@link JavaTensorType}): a table of the
 * {@link DLPackSource}s that live Python objects stand for, each object's registration in it, the
 * export every path shares ({@link #exportCapsule}), and the module-level built-in function
 * {@code _jdlpack._jdlpack_dlpack(registration, versioned, stream, copy)}, a {@code PyCFunction}
 * (METH_FASTCALL) whose C function is an FFM upcall stub: the same export for whoever holds a
 * registration capsule.
 *
 * <p><b>Registrations.</b> A {@code JavaTensor} holds its registration as a {@code PyCapsule}
 * named {@code jdlpack.tensor} whose pointer carries the table id; the capsule's destructor (an
 * upcall) removes the entry when Python drops the last reference to the capsule. No function takes
 * an id, so no Python code can reach or end a registration it does not hold (short of ctypes, which
 * can rewrite any memory); a copy of the object shares the capsule and so keeps the entry, but the
 * Python class refuses copies (see {@code bootstrap.py}).
 *
 * <p><b>Upcalls.</b> They run on the calling Python thread with the GIL held. Java code in an
 * upcall has a native frame below it, so a virtual thread running it is pinned to its carrier:
 * it cannot unmount and resume elsewhere, and the thread state Python made current for that OS
 * thread stays the one this code runs under. {@code _jdlpack_dlpack} releases the GIL
 * while a source that may block exports (see {@link #exportCapsule}). No exception leaves an
 * upcall: each becomes a Python exception.
 *
 * <p>Thread safety: the table is concurrent; upcalls may run on any thread.
 */
public final class JavaTensors {

    private static final FunctionDescriptor FASTCALL = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG);

    /** The live registrations, by the slot their id names. */
    private static final Registrations LIVE = new Registrations();

    // Made with the class, before Python runs (the runtime initializes it): making a stub is Java
    // work that may block, which must not run under the GIL. Python keeps these pointers: the
    // name for each capsule's life, the method definition for the life of the process.
    private static final MemorySegment REGISTRATION = Arena.global().allocateFrom("jdlpack.tensor");
    private static final MemorySegment REGISTRATION_DESTRUCTOR = EmbeddedPython.upcalls().stub(MethodHandles.lookup(),
            "registrationDestructor", FunctionDescriptor.ofVoid(ADDRESS));
    private static final MemorySegment DLPACK_DEF = methodDef("_jdlpack_dlpack", "dlpack");

    private JavaTensors() {
    }

    /** {@return an id for a new Python object standing for {@code source}} */
    public static long register(DLPackSource source) {
        return LIVE.add(source, null);
    }

    /**
     * {@return an id for a new Python object standing for {@code source}, which the registration
     * owns: {@code owned} is closed when the registration ends}
     */
    static long registerOwned(DLPackSource source, AutoCloseable owned) {
        return LIVE.add(source, owned);
    }

    /** Drops a registration whose capsule was never made. */
    public static void unregister(long id) {
        AutoCloseable owned = LIVE.remove(id);
        if (owned != null) {
            try {
                owned.close();
            } catch (Exception e) {
                Diagnostics.report(Level.ERROR, "closing a Java tensor made by the exchange API failed", e);
            }
        }
    }

    /** {@return how many Java tensor objects Python holds} */
    public static int live() {
        return LIVE.size();
    }

    /**
     * The registrations: a table indexed by the slot in an id's low 32 bits, with a serial number
     * in its high bits, so that finding a registration is one array read and a comparison (every
     * export from Python does it), not a boxed key's hash lookup, and an id whose registration
     * ended finds nothing even after its slot was reused. Changes are rare (one per Python object)
     * and take the table's lock; reads take none.
     */
    private static final class Registrations {
        /** One registration; final fields, so that a reader on another thread sees it whole. */
        private record Entry(long id, DLPackSource source, AutoCloseable owned) {
        }

        /** Replaced when it grows; its elements are read with volatile semantics. */
        private volatile AtomicReferenceArray<Entry> slots = new AtomicReferenceArray<>(64);
        /** Slots free for reuse, and how many are; guarded by this table's lock. */
        private int[] free = new int[64];
        private int freeCount;
        /** The next slot never used; guarded by the lock. */
        private int fresh;
        private int size;
        /** Serial numbers from 1, so that no id is 0 (PyCapsule_New refuses a NULL pointer). */
        private long serial;

        synchronized long add(DLPackSource source, AutoCloseable owned) {
            int slot;
            if (freeCount > 0) {
                slot = free[--freeCount];
            } else {
                slot = fresh++;
                if (slot == slots.length()) {
                    AtomicReferenceArray<Entry> grown = new AtomicReferenceArray<>(slots.length() * 2);
                    for (int i = 0; i < slot; i++) {
                        grown.setPlain(i, slots.getPlain(i));
                    }
                    slots = grown; // a volatile store: publishes the copied entries
                }
            }
            serial = serial == Integer.MAX_VALUE ? 1 : serial + 1; // ids stay positive
            long id = serial << 32 | slot;
            slots.set(slot, new Entry(id, source, owned));
            size++;
            return id;
        }

        /** {@return the source registered under {@code id}, or null} One volatile array read. */
        DLPackSource source(long id) {
            int slot = (int) id;
            AtomicReferenceArray<Entry> table = slots;
            if (slot < 0 || slot >= table.length()) {
                return null;
            }
            Entry entry = table.get(slot);
            return entry != null && entry.id == id ? entry.source : null;
        }

        /** Ends the registration {@code id}; {@return what it owned, or null} */
        synchronized AutoCloseable remove(long id) {
            int slot = (int) id;
            if (slot < 0 || slot >= fresh) {
                return null;
            }
            Entry entry = slots.get(slot);
            if (entry == null || entry.id != id) {
                return null;
            }
            slots.set(slot, null);
            if (freeCount == free.length) {
                free = Arrays.copyOf(free, free.length * 2);
            }
            free[freeCount++] = slot;
            size--;
            return entry.owned;
        }

        synchronized int size() {
            return size;
        }
    }

    /**
     * {@return a new {@code jdlpack.tensor} capsule for a registered id, whose destructor
     * unregisters it; NULL with the error cleared if Python could not make it} Needs the GIL; only
     * downcalls.
     */
    static MemorySegment registration(long id) {
        MemorySegment capsule = LibPythonCapsules.capsuleNew(MemorySegment.ofAddress(id), REGISTRATION, REGISTRATION_DESTRUCTOR);
        if (capsule.address() == 0) {
            LibPythonErrors.errClear();
        }
        return capsule;
    }

    /** Defines the built-in function in {@code dict}. Needs the GIL; only downcalls. */
    public static void install(MemorySegment dict) {
        MemorySegment name = DLPACK_DEF.get(ADDRESS, 0);
        MemorySegment function = LibPythonTypes.cFunctionNew(DLPACK_DEF, MemorySegment.NULL);
        if (function.address() == 0) {
            LibPythonErrors.errPrint();
            throw new IllegalStateException("PyCFunction_New failed for _jdlpack_dlpack");
        }
        int rc = LibPythonObjects.dictSetItemString(dict, name, function);
        LibPythonObjects.decRef(function);
        if (rc != 0) {
            throw new IllegalStateException("PyDict_SetItemString failed for _jdlpack_dlpack");
        }
    }

    /** A {@code PyMethodDef} in global memory for the upcall target {@code javaName}. */
    private static MemorySegment methodDef(String pythonName, String javaName) {
        MemorySegment stub = EmbeddedPython.upcalls().stub(MethodHandles.lookup(), javaName, FASTCALL);
        MemorySegment def = Arena.global().allocate(LibPythonTypes.METHOD_DEF);
        def.set(ADDRESS, 0, Arena.global().allocateFrom(pythonName));
        def.set(ADDRESS, 8, stub);
        def.set(JAVA_INT, 16, LibPythonTypes.METH_FASTCALL);
        def.set(ADDRESS, 24, MemorySegment.NULL);
        return def;
    }

    /** {@code _jdlpack_dlpack(registration, versioned, stream, copy)}: a new capsule, or NULL with an exception set. */
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

    private static MemorySegment exportOrRaise(MemorySegment args, long nargs) {
        try {
            FastcallArguments arguments = new FastcallArguments("_jdlpack_dlpack", args, nargs, "registration", "versioned", "stream",
                    "copy");
            long id = arguments.capsule(0, REGISTRATION, "a JavaTensor's 'jdlpack.tensor' capsule").address();
            boolean versioned = arguments.bool(1);
            OptionalLong stream = arguments.optionalLong(2);
            long copyCode = arguments.longValue(3);
            if (copyCode < -1 || copyCode > 1) {
                throw arguments.badValue(3, "-1 (None), 0 (False) or 1 (True)", copyCode);
            }
            return exportCapsule(LIVE.source(id), DLPackArguments.request(versioned ? ManagedTensorKind.VERSIONED : ManagedTensorKind.LEGACY,
                    stream, copyCode < 0 ? ExportRequest.Copy.IF_NEEDED : copyCode == 1 ? ExportRequest.Copy.ALWAYS : ExportRequest.Copy.NEVER));
        } catch (FastcallArguments.Refused e) {
            return PythonErrors.raise(e.type(), e.getMessage());
        } catch (Throwable t) {
            return PythonErrors.raise(LibPythonErrors.RUNTIME_ERROR, t.toString());
        }
    }

    /** {@return the source registered under {@code id}, or null when there is none (any more)} */
    static DLPackSource source(long id) {
        return LIVE.source(id);
    }

    /**
     * Exports {@code source} as the consumer asked, into a new capsule: the new reference, or NULL
     * with a Python exception set ({@code BufferError} for a request the source refuses or a
     * released tensor, {@code RuntimeError} for any other failure). Runs in an upcall, with the GIL.
     *
     * <p>A {@link CpuSource} exports with the GIL held: its export is a few hundred nanoseconds of
     * Java that waits for nothing but the ledger's short stripe lock, which no holder of the GIL
     * can be waiting to take, and releasing and retaking the GIL would cost as much again. Any
     * other source may block (a device synchronisation, user code), so the GIL is released
     * ({@code PyEval_SaveThread}) while it exports and taken back ({@code PyEval_RestoreThread}, on
     * the same carrier: the upcall pins a virtual thread) to build the capsule.
     */
    static MemorySegment exportCapsule(DLPackSource source, ExportRequest request) {
        if (source instanceof CpuSource cpu) {
            MemorySegment pointer = quickExport(cpu, request);
            return pointer.address() == 0 ? pointer : Capsules.wrap(request.kind(), pointer);
        }
        ExportedTensor handed = export(source, request, false);
        return handed == null ? MemorySegment.NULL : Capsules.wrap(handed.kind(), MemorySegment.ofAddress(handed.address()));
    }

    /**
     * Exports {@code source} for {@code request}, which must give the kind asked for: the pointer,
     * owned by the caller, or NULL with a Python exception set, as {@link #exportCapsule} says.
     * Runs in an upcall, with the GIL.
     */
    static MemorySegment exportPointer(DLPackSource source, ExportRequest request) {
        if (source instanceof CpuSource cpu) {
            return quickExport(cpu, request);
        }
        ExportedTensor handed = export(source, request, true);
        return handed == null ? MemorySegment.NULL : MemorySegment.ofAddress(handed.address());
    }

    /**
     * A host tensor's export, with the GIL held and without a handle: the pointer of the kind asked
     * for, or NULL with a Python exception set.
     */
    private static MemorySegment quickExport(CpuSource source, ExportRequest request) {
        try {
            return source.exportPointer(request);
        } catch (IllegalArgumentException | UnsupportedOperationException | IllegalStateException e) {
            return PythonErrors.raise(LibPythonErrors.BUFFER_ERROR, e.getMessage());
        } catch (Throwable t) {
            return PythonErrors.raise(LibPythonErrors.RUNTIME_ERROR, "the Java tensor's export failed: " + t);
        }
    }

    /**
     * Any other source's export, with the GIL released: {@return the export, already consumed (the
     * caller owns its pointer), or null with a Python exception set}
     */
    private static ExportedTensor export(DLPackSource source, ExportRequest request, boolean exactKind) {
        if (source == null) {
            PythonErrors.raise(LibPythonErrors.BUFFER_ERROR, "the Java tensor behind this object was released");
            return null;
        }
        ExportedTensor handle = null;
        boolean handed = false;
        RuntimeException refused = null;
        Throwable failed = null;
        MemorySegment thread = LibPythonGil.saveThread();
        try {
            handle = source.export(request);
            if (exactKind && handle.kind() != request.kind()) {
                throw new IllegalStateException(source + " exported a " + handle.kind().structName() + " when a "
                        + request.kind().structName() + " was asked for");
            }
            handle.consume(); // the caller owns the pointer from here
            handed = true;
        } catch (IllegalArgumentException | UnsupportedOperationException | IllegalStateException e) {
            refused = e;
        } catch (Throwable t) {
            failed = t;
        }
        if (!handed && handle != null && handle.isOwned()) {
            handle.close(); // an export that was made but cannot be handed over
        }
        LibPythonGil.restoreThread(thread); // the same carrier: this upcall pins a virtual thread
        if (refused != null) {
            PythonErrors.raise(LibPythonErrors.BUFFER_ERROR, refused.getMessage());
            return null;
        }
        if (failed != null || !handed) {
            PythonErrors.raise(LibPythonErrors.RUNTIME_ERROR, "the Java tensor's export failed: " + failed);
            return null;
        }
        return handle;
    }

    /**
     * The registration capsule's destructor: its {@code JavaTensor} (and every other holder of the
     * capsule) is gone. Python calls it with the GIL held, on any thread. Never throws.
     */
    @SuppressWarnings("unused") // the upcall target
    private static void registrationDestructor(MemorySegment capsule) {
        try {
            if (LibPythonCapsules.capsuleIsValid(capsule, REGISTRATION)) { // never sets an exception
                MemorySegment pointer = LibPythonCapsules.capsuleGetPointer(capsule, REGISTRATION);
                unregister(pointer.address());
            }
        } catch (Throwable t) {
            Diagnostics.report(Level.ERROR, "a JavaTensor registration's destructor failed", t);
        }
    }
}
