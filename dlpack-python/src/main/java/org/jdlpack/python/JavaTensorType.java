package org.jdlpack.python;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.plumbing.Diagnostics;

/**
 * The Python type {@code _jdlpack.JavaTensor}, made with {@code PyType_FromSpec}: a C-level type
 * whose {@code __dlpack__} ({@code METH_FASTCALL | METH_KEYWORDS}), {@code __dlpack_device__} and
 * deallocator are FFM upcalls, so that {@code np.from_dlpack(x)} reaches Java in one upcall, with no
 * Python frame, keyword parsing or tuple on the way. The type also carries the DLPack 1.3 C
 * exchange API ({@link ExchangeApi}).
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
 * <p><b>{@code __dlpack__}</b> takes keyword arguments only, as the array API defines it:
 * {@code stream=None, max_version=None, dl_device=None, copy=None}. Keyword names are compared by
 * identity with interned strings first (Python code passes interned names), then by their
 * characters; the last few keyword tuples seen are remembered (NumPy passes the same tuple every
 * time), each kept alive for the process so that its address cannot be reused.
 *
 * <p>Every upcall runs with the GIL held, never lets an exception out, and reports failures as
 * Python exceptions. Thread safety: the static state is written once, by {@link #install}, before
 * any instance exists; the keyword cache is immutable arrays published through a volatile field
 * (the GIL serialises its writers).
 */
final class JavaTensorType {

    /** The keywords of {@code __dlpack__}, in the order of {@link #KEYWORDS}. */
    private static final int STREAM = 0;
    private static final int MAX_VERSION = 1;
    private static final int DL_DEVICE = 2;
    private static final int COPY = 3;
    private static final String[] KEYWORDS = {"stream", "max_version", "dl_device", "copy"};
    private static final byte[][] KEYWORD_BYTES = {"stream".getBytes(StandardCharsets.UTF_8),
            "max_version".getBytes(StandardCharsets.UTF_8), "dl_device".getBytes(StandardCharsets.UTF_8),
            "copy".getBytes(StandardCharsets.UTF_8)};
    /** How many keyword tuples are remembered (and kept alive) at most. */
    private static final int KEYWORD_CACHE_SIZE = 8;

    /** Where the fields lie: after the {@code PyObject} header. */
    static final long HEADER = Interpreter.location().objectSize();
    static final long REGISTRATION = HEADER;
    static final long DEVICE = HEADER + 8;
    static final long WEAKLIST = HEADER + 16;
    static final long ID = HEADER + 24;
    static final long DEVICE_TYPE = HEADER + 32;
    static final long DEVICE_ID = HEADER + 36;
    static final long VIEWED_EXPORT = HEADER + 40;
    static final long SIZE = HEADER + 48;
    /** {@code ob_type}: the header's last field. */
    static final long OB_TYPE = HEADER - ADDRESS.byteSize();

    private static final FunctionDescriptor FASTCALL_KEYWORDS = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS);
    private static final FunctionDescriptor NOARGS = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS);
    private static final MemorySegment DLPACK = Interpreter.upcalls().stub(MethodHandles.lookup(), "dlpack", FASTCALL_KEYWORDS);
    private static final MemorySegment DLPACK_DEVICE = Interpreter.upcalls().stub(MethodHandles.lookup(), "dlpackDevice", NOARGS);
    private static final MemorySegment DEALLOC = Interpreter.upcalls().stub(MethodHandles.lookup(), "dealloc",
            FunctionDescriptor.ofVoid(ADDRESS));

    /** Set by {@link #install}, under the GIL, before any instance exists. */
    private static volatile MemorySegment type = MemorySegment.NULL;
    private static volatile MemorySegment free = MemorySegment.NULL;
    /** The interned keyword names, in the order of {@link #KEYWORDS}. */
    private static final long[] INTERNED = new long[KEYWORDS.length];
    /** Keyword tuples seen, and the keyword each position names; replaced whole, never changed. */
    private static volatile long[] cachedTuples = new long[0];
    private static volatile int[][] cachedKeywords = new int[0][];

    private JavaTensorType() {
    }

    /** {@return the type object, or NULL before {@link #install}} */
    static MemorySegment type() {
        return type;
    }

    /** {@return whether {@code object} is an instance of the type (exactly: the type cannot be subclassed)} */
    static boolean isInstance(MemorySegment object) {
        return object.address() != 0 && LibPython.memory(object, HEADER).get(ADDRESS, OB_TYPE).address() == type.address();
    }

    /** {@return the instance's fields, readable and writable} */
    static MemorySegment fields(MemorySegment instance) {
        return LibPython.memory(instance, SIZE);
    }

    /**
     * Makes the type and puts it into the module's dict as {@code JavaTensor}, with the exchange
     * API capsule on it. Needs the GIL; only downcalls.
     */
    static void install(Arena arena, MemorySegment dict) {
        Arena global = Arena.global();
        MemorySegment methods = global.allocate(LibPython.METHOD_DEF, 3);
        methodDef(methods.asSlice(0, LibPython.METHOD_DEF), "__dlpack__", DLPACK, LibPython.METH_FASTCALL | LibPython.METH_KEYWORDS,
                "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule of a fresh export");
        methodDef(methods.asSlice(LibPython.METHOD_DEF.byteSize(), LibPython.METHOD_DEF), "__dlpack_device__", DLPACK_DEVICE,
                LibPython.METH_NOARGS, "__dlpack_device__(): (device_type, device_id)");
        MemorySegment members = global.allocate(LibPython.MEMBER_DEF, 4);
        memberDef(members, 0, "_jdlpack_registration", LibPython.T_OBJECT_EX, REGISTRATION);
        memberDef(members, 1, "_jdlpack_device", LibPython.T_OBJECT_EX, DEVICE);
        memberDef(members, 2, "__weaklistoffset__", LibPython.T_PYSSIZET, WEAKLIST);
        MemorySegment slots = global.allocate(LibPython.TYPE_SLOT, 5);
        slot(slots, 0, LibPython.TP_DEALLOC, DEALLOC);
        slot(slots, 1, LibPython.TP_METHODS, methods);
        slot(slots, 2, LibPython.TP_MEMBERS, members);
        slot(slots, 3, LibPython.TP_DOC, global.allocateFrom(
                "A Java tensor: np.from_dlpack(x) and torch.from_dlpack(x) take it without copying."));
        MemorySegment spec = global.allocate(LibPython.TYPE_SPEC);
        spec.set(ADDRESS, 0, global.allocateFrom("_jdlpack.JavaTensor"));
        spec.set(JAVA_INT, 8, (int) SIZE);
        spec.set(JAVA_INT, 12, 0);
        spec.set(JAVA_INT, 16, LibPython.TPFLAGS_DEFAULT
                | (Interpreter.location().atLeast(3, 10) ? LibPython.TPFLAGS_DISALLOW_INSTANTIATION : 0));
        spec.set(ADDRESS, 24, slots);
        MemorySegment made = LibPython.typeFromSpec(spec);
        if (made.address() == 0) {
            LibPython.errPrint();
            throw new IllegalStateException("PyType_FromSpec failed for _jdlpack.JavaTensor");
        }
        free = LibPython.typeGetSlot(made, LibPython.TP_FREE);
        if (free.address() == 0) {
            throw new IllegalStateException("the JavaTensor type has no tp_free");
        }
        for (int i = 0; i < KEYWORDS.length; i++) {
            MemorySegment name = LibPython.unicodeInternFromString(arena.allocateFrom(KEYWORDS[i]));
            if (name.address() == 0) {
                throw new IllegalStateException("PyUnicode_InternFromString failed");
            }
            INTERNED[i] = name.address(); // kept for the life of the process
        }
        ExchangeApi.attach(arena, made);
        type = made; // the module's reference, kept for the process
        if (LibPython.dictSetItemString(dict, arena.allocateFrom("JavaTensor"), made) != 0) {
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
        MemorySegment def = members.asSlice(index * LibPython.MEMBER_DEF.byteSize(), LibPython.MEMBER_DEF);
        def.set(ADDRESS, 0, Arena.global().allocateFrom(name));
        def.set(JAVA_INT, 8, memberType);
        def.set(JAVA_LONG, 16, offset);
        def.set(JAVA_INT, 24, LibPython.READONLY);
        def.set(ADDRESS, 32, MemorySegment.NULL);
    }

    private static void slot(MemorySegment slots, int index, int slot, MemorySegment function) {
        MemorySegment entry = slots.asSlice(index * LibPython.TYPE_SLOT.byteSize(), LibPython.TYPE_SLOT);
        entry.set(JAVA_INT, 0, slot);
        entry.set(ADDRESS, 8, function);
    }

    /**
     * {@return a new instance standing for the registered {@code id}} On failure the registration
     * capsule has been dropped (which unregisters {@code id}) and an exception is thrown. Needs the
     * GIL; only downcalls.
     */
    static MemorySegment newInstance(long id, DLDevice device) {
        MemorySegment registration = JavaTensors.registration(id);
        if (registration.address() == 0) {
            throw new OutOfMemoryError("PyCapsule_New failed for a JavaTensor registration");
        }
        MemorySegment tuple = LibPython.tupleNew(2);
        MemorySegment instance = MemorySegment.NULL;
        if (tuple.address() != 0) {
            LibPython.tupleSetItem(tuple, 0, LibPython.longFromLong(device.deviceType()));
            LibPython.tupleSetItem(tuple, 1, LibPython.longFromLong(device.deviceId()));
            instance = LibPython.typeGenericAlloc(type);
        }
        if (instance.address() == 0) {
            LibPython.errClear();
            LibPython.decRef(tuple);
            LibPython.decRef(registration);
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
    private static MemorySegment dlpack(MemorySegment self, MemorySegment args, long nargs, MemorySegment kwnames) {
        try {
            return dlpackOrRaise(self, args, nargs, kwnames);
        } catch (Throwable t) {
            try {
                return JavaTensors.raise(LibPython.RUNTIME_ERROR, t.toString());
            } catch (Throwable ignored) {
                return MemorySegment.NULL; // nothing may leave an upcall
            }
        }
    }

    private static MemorySegment dlpackOrRaise(MemorySegment self, MemorySegment args, long nargs, MemorySegment kwnames) {
        if (nargs != 0) {
            return JavaTensors.raise(LibPython.TYPE_ERROR, "__dlpack__() takes no positional arguments (" + nargs + " given): "
                    + "pass stream=, max_version=, dl_device= and copy= by keyword");
        }
        MemorySegment stream = MemorySegment.NULL;
        MemorySegment maxVersion = MemorySegment.NULL;
        MemorySegment dlDevice = MemorySegment.NULL;
        MemorySegment copy = MemorySegment.NULL;
        if (kwnames.address() != 0) {
            int[] keywords = keywords(kwnames);
            if (keywords == null) {
                return MemorySegment.NULL; // an unknown keyword: TypeError set
            }
            MemorySegment values = LibPython.memory(args, keywords.length * ADDRESS.byteSize());
            for (int i = 0; i < keywords.length; i++) {
                MemorySegment value = values.getAtIndex(ADDRESS, i);
                switch (keywords[i]) {
                    case STREAM -> stream = value;
                    case MAX_VERSION -> maxVersion = value;
                    case DL_DEVICE -> dlDevice = value;
                    default -> copy = value;
                }
            }
        }
        MemorySegment fields = fields(self);
        long none = LibPython.NONE.address();
        if (dlDevice.address() != 0 && dlDevice.address() != none) {
            long[] asked = new long[2];
            if (!intPair(dlDevice, asked)) {
                return MemorySegment.NULL;
            }
            int deviceType = fields.get(JAVA_INT, DEVICE_TYPE);
            int deviceId = fields.get(JAVA_INT, DEVICE_ID);
            if (asked[0] != deviceType || asked[1] != deviceId) {
                return JavaTensors.raise(LibPython.BUFFER_ERROR, "this Java tensor lives on device (" + deviceType + ", " + deviceId
                        + ") and cannot be exported to (" + asked[0] + ", " + asked[1] + ")");
            }
        }
        ExportRequest.Copy copyRequest = ExportRequest.Copy.IF_NEEDED;
        if (copy.address() != 0 && copy.address() != none) {
            if (copy.address() == LibPython.TRUE.address()) {
                copyRequest = ExportRequest.Copy.ALWAYS;
            } else if (copy.address() == LibPython.FALSE.address()) {
                copyRequest = ExportRequest.Copy.NEVER;
            } else {
                return JavaTensors.raise(LibPython.TYPE_ERROR, "copy must be None, True or False, not " + repr(copy));
            }
        }
        boolean versioned = false;
        if (maxVersion.address() != 0 && maxVersion.address() != none) {
            MemorySegment major = LibPython.tupleGetItem(maxVersion, 0); // borrowed
            long value;
            if (major.address() != 0) {
                value = LibPython.longAsLong(major);
                if (value == -1 && LibPython.errOccurred()) {
                    LibPython.errClear();
                    value = slowInt(major);
                }
            } else {
                LibPython.errClear(); // not a tuple: any sequence will do
                MemorySegment item = LibPython.sequenceGetItem(maxVersion, 0);
                if (item.address() == 0) {
                    return MemorySegment.NULL;
                }
                value = slowInt(item);
                LibPython.decRef(item);
            }
            if (value == -1 && LibPython.errOccurred()) {
                return MemorySegment.NULL;
            }
            versioned = value >= 1;
        }
        OptionalLong streamRequest = OptionalLong.empty();
        if (stream.address() != 0 && stream.address() != none) {
            long value = slowInt(stream);
            if (value == -1 && LibPython.errOccurred()) {
                return MemorySegment.NULL;
            }
            streamRequest = OptionalLong.of(value);
        }
        return JavaTensors.exportCapsule(source(fields), versioned ? ManagedTensorKind.VERSIONED : ManagedTensorKind.LEGACY,
                streamRequest, copyRequest);
    }

    /** {@code int(x)} as a {@code long}; -1 with an exception set on failure. */
    private static long slowInt(MemorySegment object) {
        MemorySegment integer = LibPython.numberLong(object);
        if (integer.address() == 0) {
            return -1;
        }
        long value = LibPython.longAsLong(integer);
        LibPython.decRef(integer);
        return value;
    }

    /** Reads {@code (int(pair[0]), int(pair[1]))}; false with an exception set on failure. */
    private static boolean intPair(MemorySegment pair, long[] out) {
        for (int i = 0; i < 2; i++) {
            MemorySegment item = LibPython.sequenceGetItem(pair, i);
            if (item.address() == 0) {
                return false;
            }
            out[i] = slowInt(item);
            LibPython.decRef(item);
            if (out[i] == -1 && LibPython.errOccurred()) {
                return false;
            }
        }
        return true;
    }

    /** {@code repr(object)}, or "?" (the error cleared). */
    private static String repr(MemorySegment object) {
        MemorySegment text = LibPython.objectRepr(object);
        if (text.address() == 0) {
            LibPython.errClear();
            return "?";
        }
        try {
            return GuardedCalls.utf8(text);
        } finally {
            LibPython.decRef(text);
        }
    }

    /**
     * {@return which keyword each name of {@code kwnames} is, or null with a {@code TypeError} set
     * for a name {@code __dlpack__} does not take}
     */
    private static int[] keywords(MemorySegment kwnames) {
        long[] tuples = cachedTuples;
        for (int i = 0; i < tuples.length; i++) {
            if (tuples[i] == kwnames.address()) {
                return cachedKeywords[i];
            }
        }
        long count = LibPython.tupleSize(kwnames);
        if (count < 0) {
            LibPython.errClear();
            JavaTensors.raise(LibPython.TYPE_ERROR, "__dlpack__() got keyword names that are not a tuple");
            return null;
        }
        int[] keywords = new int[(int) count];
        for (int i = 0; i < count; i++) {
            MemorySegment name = LibPython.tupleGetItem(kwnames, i);
            keywords[i] = keyword(name);
            if (keywords[i] < 0) {
                JavaTensors.raise(LibPython.TYPE_ERROR, "__dlpack__() got an unexpected keyword argument '" + GuardedCalls.utf8(name)
                        + "'; it takes stream, max_version, dl_device and copy");
                return null;
            }
        }
        if (tuples.length < KEYWORD_CACHE_SIZE) {
            LibPython.incRef(kwnames); // kept for the process: its address cannot be reused while it is cached
            long[] moreTuples = java.util.Arrays.copyOf(tuples, tuples.length + 1);
            int[][] moreKeywords = java.util.Arrays.copyOf(cachedKeywords, tuples.length + 1);
            moreTuples[tuples.length] = kwnames.address();
            moreKeywords[tuples.length] = keywords;
            cachedKeywords = moreKeywords; // written before the tuples, read after them
            cachedTuples = moreTuples;
        }
        return keywords;
    }

    private static int keyword(MemorySegment name) {
        for (int k = 0; k < INTERNED.length; k++) {
            if (INTERNED[k] == name.address()) {
                return k;
            }
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment chars = LibPython.unicodeUtf8(name, arena);
            if (chars.address() == 0) {
                LibPython.errClear();
                return -1;
            }
            for (int k = 0; k < KEYWORD_BYTES.length; k++) {
                if (chars.byteSize() == KEYWORD_BYTES[k].length
                        && MemorySegment.mismatch(chars, 0, chars.byteSize(), MemorySegment.ofArray(KEYWORD_BYTES[k]), 0,
                        KEYWORD_BYTES[k].length) == -1) {
                    return k;
                }
            }
            return -1;
        }
    }

    /** {@code __dlpack_device__(self)}: the device tuple, a new reference. */
    @SuppressWarnings("unused") // the upcall target
    private static MemorySegment dlpackDevice(MemorySegment self, MemorySegment unused) {
        try {
            MemorySegment device = fields(self).get(ADDRESS, DEVICE);
            if (device.address() == 0) {
                return JavaTensors.raise(LibPython.BUFFER_ERROR, "this JavaTensor stands for no Java tensor");
            }
            LibPython.incRef(device);
            return device;
        } catch (Throwable t) {
            return JavaTensors.raise(LibPython.RUNTIME_ERROR, t.toString());
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
                LibPython.objectClearWeakRefs(self);
            }
            MemorySegment registration = fields.get(ADDRESS, REGISTRATION);
            MemorySegment device = fields.get(ADDRESS, DEVICE);
            MemorySegment viewed = fields.get(ADDRESS, VIEWED_EXPORT);
            fields.set(ADDRESS, REGISTRATION, MemorySegment.NULL);
            fields.set(ADDRESS, DEVICE, MemorySegment.NULL);
            fields.set(ADDRESS, VIEWED_EXPORT, MemorySegment.NULL);
            MemorySegment ownType = type;
            LibPython.callPointer(free, self);
            LibPython.decRef(registration); // NULL allowed
            LibPython.decRef(device);
            if (viewed.address() != 0) {
                ImportedTensor.discard(ManagedTensorKind.VERSIONED, viewed);
            }
            LibPython.decRef(ownType);
        } catch (Throwable t) {
            Diagnostics.report(Level.ERROR, "a JavaTensor's deallocation failed", t);
        }
    }
}
