package org.jdlpack.python.internal.bridge;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.plumbing.Diagnostics;
import org.jdlpack.python.DLPackSource;
import org.jdlpack.python.ExportRequest;
import org.jdlpack.python.internal.capi.EmbeddedPython;
import org.jdlpack.python.internal.capi.LibPython;
import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;
import org.jdlpack.python.internal.capi.LibPythonTypes;
import org.jdlpack.python.internal.objects.PythonErrors;

/**
 * The Python type {@code _jdlpack.JavaTensor}, made with {@code PyType_FromSpec}: a C-level type
 * whose {@code __dlpack__} ({@code METH_FASTCALL | METH_KEYWORDS}), {@code __dlpack_device__} and
 * deallocator are FFM upcalls, so that {@code np.from_dlpack(x)} reaches Java in one upcall, with no
 * Python frame, keyword parsing or tuple on the way. The type also carries the DLPack 1.3 C
 * exchange API, which {@code ExchangeApi} attaches to it.
 *
 * <p><b>An instance</b> is the {@code PyObject} header followed by this module's fields:
 * <pre>
 *   +0   PyObject* registration   the 'jdlpack.tensor' capsule ({@link JavaTensors}); member _jdlpack_registration, read-only
 *   +8   PyObject* device         the (device_type, device_id) tuple; member _jdlpack_device, read-only
 *   +16  PyObject* weaklist       __weakref__ support
 *   +24  int64     id             the registration's id, read without touching the capsule
 *   +32  int32     device_type, +36 int32 device_id
 *   +40  DLManagedTensorVersioned* the export {@code dltensor_from_py_object_no_sync} views, or NULL
 * </pre>
 * The offsets start at {@code object.__basicsize__} of the embedded Python. Java makes instances
 * itself ({@code PyType_GenericAlloc}, fields written directly); Python cannot call the type
 * (3.10 and newer: {@code Py_TPFLAGS_DISALLOW_INSTANTIATION}; older ones make an empty instance
 * whose {@code __dlpack__} is a {@code BufferError}). The bootstrap adds what need not be fast in
 * Python: {@code __repr__}, the read-only {@code __setattr__}, and the refused copies.
 *
 * <p><b>{@code __dlpack__}</b> takes keyword arguments only, as the array API defines it
 * ({@link DLPackArguments} reads them), and exports through {@link JavaTensors#exportCapsule}.
 *
 * <p>Every upcall runs with the GIL held, never lets an exception out, and reports failures as
 * Python exceptions. Thread safety: the static state is written once, by {@link #install}, before
 * any instance exists.
 */
public final class JavaTensorType {

    /** Where the fields lie: after the {@code PyObject} header. */
    static final long HEADER = EmbeddedPython.objectSize();
    static final long REGISTRATION = HEADER;
    static final long DEVICE = HEADER + 8;
    static final long WEAKLIST = HEADER + 16;
    static final long ID = HEADER + 24;
    static final long DEVICE_TYPE = HEADER + 32;
    static final long DEVICE_ID = HEADER + 36;
    static final long VIEWED_EXPORT = HEADER + 40;
    static final long SIZE = HEADER + 48;

    /**
     * {@code __dlpack__}'s vectorcall, with its pointers (the result too) as 64-bit integers (the
     * same registers on LP64 ABIs): the stub then boxes no segment per argument, which the JIT kept
     * on the heap on every call.
     */
    private static final FunctionDescriptor FASTCALL_KEYWORDS = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor NOARGS = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS);
    private static final MemorySegment DLPACK = EmbeddedPython.upcalls().stub(MethodHandles.lookup(), "dlpack", FASTCALL_KEYWORDS);
    private static final MemorySegment DLPACK_DEVICE = EmbeddedPython.upcalls().stub(MethodHandles.lookup(), "dlpackDevice", NOARGS);
    private static final MemorySegment DEALLOC = EmbeddedPython.upcalls().stub(MethodHandles.lookup(), "dealloc",
            FunctionDescriptor.ofVoid(ADDRESS));

    /** Set by {@link #install}, under the GIL, before any instance exists. */
    private static volatile MemorySegment type = MemorySegment.NULL;
    private static volatile MemorySegment free = MemorySegment.NULL;

    private JavaTensorType() {
    }

    /** {@return the type object, or NULL before {@link #install}} */
    public static MemorySegment type() {
        return type;
    }

    /** {@return whether {@code object} is an instance of the type (exactly: the type cannot be subclassed)} */
    static boolean isInstance(MemorySegment object) {
        return isInstance(object.address());
    }

    /** {@link #isInstance(MemorySegment)} of a raw address. */
    static boolean isInstance(long object) {
        return object != 0 && LibPython.typeOf(object) == type.address();
    }

    /** {@return the instance's fields, readable and writable} */
    static MemorySegment fields(MemorySegment instance) {
        return LibPython.memory(instance, SIZE);
    }

    /** {@link #fields(MemorySegment)} of a raw address. */
    static MemorySegment fields(long instance) {
        return LibPython.memory(instance, SIZE);
    }

    /**
     * Makes the type and puts it into the module's dict as {@code JavaTensor}; the exchange API
     * capsule is put on it next, before any Python code runs. Needs the GIL; only downcalls.
     *
     * @param disallowInstantiation whether the type may say that Python cannot call it (3.10 and newer)
     */
    public static void install(Arena arena, MemorySegment dict, boolean disallowInstantiation) {
        Arena global = Arena.global();
        MemorySegment methods = global.allocate(LibPythonTypes.METHOD_DEF, 3);
        methodDef(methods.asSlice(0, LibPythonTypes.METHOD_DEF), "__dlpack__", DLPACK, LibPythonTypes.METH_FASTCALL | LibPythonTypes.METH_KEYWORDS,
                "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule of a fresh export");
        methodDef(methods.asSlice(LibPythonTypes.METHOD_DEF.byteSize(), LibPythonTypes.METHOD_DEF), "__dlpack_device__", DLPACK_DEVICE,
                LibPythonTypes.METH_NOARGS, "__dlpack_device__(): (device_type, device_id)");
        MemorySegment members = global.allocate(LibPythonTypes.MEMBER_DEF, 4);
        memberDef(members, 0, "_jdlpack_registration", LibPythonTypes.T_OBJECT_EX, REGISTRATION);
        memberDef(members, 1, "_jdlpack_device", LibPythonTypes.T_OBJECT_EX, DEVICE);
        memberDef(members, 2, "__weaklistoffset__", LibPythonTypes.T_PYSSIZET, WEAKLIST);
        MemorySegment slots = global.allocate(LibPythonTypes.TYPE_SLOT, 5);
        slot(slots, 0, LibPythonTypes.TP_DEALLOC, DEALLOC);
        slot(slots, 1, LibPythonTypes.TP_METHODS, methods);
        slot(slots, 2, LibPythonTypes.TP_MEMBERS, members);
        slot(slots, 3, LibPythonTypes.TP_DOC, global.allocateFrom(
                "A Java tensor: np.from_dlpack(x) and torch.from_dlpack(x) take it without copying."));
        MemorySegment spec = global.allocate(LibPythonTypes.TYPE_SPEC);
        spec.set(ADDRESS, 0, global.allocateFrom("_jdlpack.JavaTensor"));
        spec.set(JAVA_INT, 8, (int) SIZE);
        spec.set(JAVA_INT, 12, 0);
        spec.set(JAVA_INT, 16, LibPythonTypes.TPFLAGS_DEFAULT
                | (disallowInstantiation ? LibPythonTypes.TPFLAGS_DISALLOW_INSTANTIATION : 0));
        spec.set(ADDRESS, 24, slots);
        MemorySegment made = LibPythonTypes.typeFromSpec(spec);
        if (made.address() == 0) {
            LibPythonErrors.errPrint();
            throw new IllegalStateException("PyType_FromSpec failed for _jdlpack.JavaTensor");
        }
        free = LibPythonTypes.typeGetSlot(made, LibPythonTypes.TP_FREE);
        if (free.address() == 0) {
            throw new IllegalStateException("the JavaTensor type has no tp_free");
        }
        DLPackArguments.intern(arena);
        Capsules.install();
        type = made; // the module's reference, kept for the process
        if (LibPythonObjects.dictSetItemString(dict, arena.allocateFrom("JavaTensor"), made) != 0) {
            throw new IllegalStateException("PyDict_SetItemString failed for JavaTensor");
        }
    }

    private static void methodDef(MemorySegment def, String name, MemorySegment function, int flags, String doc) {
        def.set(ADDRESS, 0, Arena.global().allocateFrom(name));
        def.set(ADDRESS, 8, function);
        def.set(JAVA_INT, 16, flags);
        def.set(ADDRESS, 24, Arena.global().allocateFrom(doc));
    }

    private static void memberDef(MemorySegment members, int index, String name, int memberType, long offset) {
        MemorySegment def = members.asSlice(index * LibPythonTypes.MEMBER_DEF.byteSize(), LibPythonTypes.MEMBER_DEF);
        def.set(ADDRESS, 0, Arena.global().allocateFrom(name));
        def.set(JAVA_INT, 8, memberType);
        def.set(JAVA_LONG, 16, offset);
        def.set(JAVA_INT, 24, LibPythonTypes.READONLY);
        def.set(ADDRESS, 32, MemorySegment.NULL);
    }

    private static void slot(MemorySegment slots, int index, int slot, MemorySegment function) {
        MemorySegment entry = slots.asSlice(index * LibPythonTypes.TYPE_SLOT.byteSize(), LibPythonTypes.TYPE_SLOT);
        entry.set(JAVA_INT, 0, slot);
        entry.set(ADDRESS, 8, function);
    }

    /**
     * {@return a new instance standing for the registered {@code id}} On failure the registration
     * capsule has been dropped (which unregisters {@code id}) and an exception is thrown. Needs the
     * GIL; only downcalls.
     */
    public static MemorySegment newInstance(long id, DLDevice device) {
        MemorySegment registration = JavaTensors.registration(id);
        if (registration.address() == 0) {
            throw new OutOfMemoryError("PyCapsule_New failed for a JavaTensor registration");
        }
        MemorySegment tuple = LibPythonObjects.tupleNew(2);
        MemorySegment instance = MemorySegment.NULL;
        if (tuple.address() != 0) {
            LibPythonObjects.tupleSetItem(tuple, 0, LibPythonObjects.longFromLong(device.deviceType()));
            LibPythonObjects.tupleSetItem(tuple, 1, LibPythonObjects.longFromLong(device.deviceId()));
            instance = LibPythonTypes.typeGenericAlloc(type);
        }
        if (instance.address() == 0) {
            LibPythonErrors.errClear();
            LibPythonObjects.decRef(tuple);
            LibPythonObjects.decRef(registration);
            throw new OutOfMemoryError("Python could not make a JavaTensor");
        }
        MemorySegment fields = fields(instance);
        fields.set(ADDRESS, REGISTRATION, registration); // the instance owns both references now
        fields.set(ADDRESS, DEVICE, tuple);
        fields.set(JAVA_LONG, ID, id);
        fields.set(JAVA_INT, DEVICE_TYPE, device.deviceType());
        fields.set(JAVA_INT, DEVICE_ID, device.deviceId());
        return instance;
    }

    /** {@return the source an instance stands for, or null (released, or an empty instance)} */
    static DLPackSource source(MemorySegment fields) {
        long id = fields.get(JAVA_LONG, ID);
        return id == 0 ? null : JavaTensors.source(id);
    }

    // ---- Upcalls ----

    /** {@code __dlpack__(self, *args, **kwargs)} through vectorcall: a new capsule, or NULL with an exception set. */
    @SuppressWarnings("unused") // the upcall target
    private static long dlpack(long self, long args, long nargs, long kwnames) {
        try {
            return dlpackOrRaise(self, args, nargs, kwnames);
        } catch (Throwable t) {
            try {
                return PythonErrors.raise(LibPythonErrors.RUNTIME_ERROR, t.toString()).address();
            } catch (Throwable ignored) {
                return 0; // nothing may leave an upcall
            }
        }
    }

    private static long dlpackOrRaise(long self, long args, long nargs, long kwnames) {
        MemorySegment fields = fields(self);
        ExportRequest request = DLPackArguments.read(args, nargs, kwnames, fields.get(JAVA_INT, DEVICE_TYPE), fields.get(JAVA_INT, DEVICE_ID));
        return request == null ? 0 : JavaTensors.exportCapsule(source(fields), request).address();
    }

    /** {@code __dlpack_device__(self)}: the device tuple, a new reference. */
    @SuppressWarnings("unused") // the upcall target
    private static MemorySegment dlpackDevice(MemorySegment self, MemorySegment unused) {
        try {
            MemorySegment device = fields(self).get(ADDRESS, DEVICE);
            if (device.address() == 0) {
                return PythonErrors.raise(LibPythonErrors.BUFFER_ERROR, "this JavaTensor stands for no Java tensor");
            }
            LibPythonObjects.incRef(device);
            return device;
        } catch (Throwable t) {
            return PythonErrors.raise(LibPythonErrors.RUNTIME_ERROR, t.toString());
        }
    }

    /**
     * {@code tp_dealloc}: Python dropped the last reference. Clears weak references, drops the
     * fields' references (the registration capsule's destructor unregisters), releases the export
     * {@code dltensor_from_py_object_no_sync} viewed, frees the object and drops its reference to
     * the type, as a heap type's deallocator must. Never throws.
     */
    @SuppressWarnings("unused") // the upcall target
    private static void dealloc(MemorySegment self) {
        try {
            MemorySegment fields = fields(self);
            if (fields.get(ADDRESS, WEAKLIST).address() != 0) {
                LibPythonTypes.objectClearWeakRefs(self);
            }
            MemorySegment registration = fields.get(ADDRESS, REGISTRATION);
            MemorySegment device = fields.get(ADDRESS, DEVICE);
            MemorySegment viewed = fields.get(ADDRESS, VIEWED_EXPORT);
            fields.set(ADDRESS, REGISTRATION, MemorySegment.NULL);
            fields.set(ADDRESS, DEVICE, MemorySegment.NULL);
            fields.set(ADDRESS, VIEWED_EXPORT, MemorySegment.NULL);
            MemorySegment ownType = type;
            LibPython.callPointer(free, self);
            LibPythonObjects.decRef(registration); // NULL allowed
            LibPythonObjects.decRef(device);
            if (viewed.address() != 0) {
                ImportedTensor.discard(ManagedTensorKind.VERSIONED, viewed);
            }
            LibPythonObjects.decRef(ownType);
        } catch (Throwable t) {
            Diagnostics.report(Level.ERROR, "a JavaTensor's deallocation failed", t);
        }
    }
}
