package org.jdlpack.python.internal.bridge;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.OptionalLong;

import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.python.ExportRequest;
import org.jdlpack.python.internal.capi.LibPython;
import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;
import org.jdlpack.python.internal.objects.PythonErrors;
import org.jdlpack.python.internal.objects.PythonStrings;

/**
 * The arguments of {@code JavaTensor.__dlpack__}, read from a vectorcall
 * ({@code METH_FASTCALL | METH_KEYWORDS}) into an {@link ExportRequest}: keyword arguments only,
 * as the array API defines them, {@code stream=None, max_version=None, dl_device=None, copy=None}.
 *
 * <p>Keyword names are compared by identity with interned strings first (Python code passes
 * interned names), then by their characters; the last few keyword tuples seen are remembered
 * (NumPy passes the same tuple every time), each kept alive for the process so that its address
 * cannot be reused; so are the last few {@code max_version} tuples, where they cannot change (an
 * exact tuple whose first item is an exact int), so that NumPy's call reads no Python object.
 *
 * <p>Every method runs in the upcall, with the GIL held, and makes only downcalls. Thread safety:
 * the interned names are written once, by {@link #intern}, before any instance exists; the
 * remembered tuples are {@link KeptObjectAnswers}.
 */
public final class DLPackArguments {

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
    /** The interned keyword names, in the order of {@link #KEYWORDS}. */
    private static final long[] INTERNED = new long[KEYWORDS.length];
    /** Keyword tuples seen, and the keyword each position names. */
    private static final KeptObjectAnswers<int[]> KEYWORD_TUPLES = new KeptObjectAnswers<>(KEYWORD_CACHE_SIZE);
    /** {@code max_version} tuples seen (exact tuples of exact ints), and whether each asks for the versioned struct. */
    private static final KeptObjectAnswers<Boolean> VERSION_TUPLES = new KeptObjectAnswers<>(KEYWORD_CACHE_SIZE);

    private DLPackArguments() {
    }

    /** Interns the keyword names, for the life of the process. Needs the GIL; only downcalls. */
    static void intern(Arena arena) {
        for (int i = 0; i < KEYWORDS.length; i++) {
            MemorySegment name = LibPythonObjects.unicodeInternFromString(arena.allocateFrom(KEYWORDS[i]));
            if (name.address() == 0) {
                throw new IllegalStateException("PyUnicode_InternFromString failed");
            }
            INTERNED[i] = name.address(); // kept for the life of the process
        }
    }

    /** {@return the request for these arguments: the shared one for what {@code np.from_dlpack(x)} asks} */
    static ExportRequest request(ManagedTensorKind kind, OptionalLong stream, ExportRequest.Copy copy) {
        return stream.isEmpty() && copy == ExportRequest.Copy.IF_NEEDED ? ExportRequest.of(kind) : new ExportRequest(kind, stream, copy);
    }

    /**
     * Reads the arguments of one {@code __dlpack__} call on an instance living on
     * {@code (deviceType, deviceId)}: {@return the request, or null with a Python exception set}
     * ({@code TypeError} for a positional argument, an unknown keyword or a {@code copy} that is not
     * None, True or False; {@code BufferError} for another {@code dl_device}; what Python raised
     * reading a {@code max_version}, {@code dl_device} or {@code stream} that is not integers).
     */
    static ExportRequest read(long args, long nargs, long kwnames, int deviceType, int deviceId) {
        if (nargs != 0) {
            return raise(LibPythonErrors.TYPE_ERROR, "__dlpack__() takes no positional arguments (" + nargs + " given): "
                    + "pass stream=, max_version=, dl_device= and copy= by keyword");
        }
        // Addresses, 0 when not given: objects are made segments only where a call needs one.
        long stream = 0;
        long maxVersion = 0;
        long dlDevice = 0;
        long copy = 0;
        if (kwnames != 0) {
            int[] keywords = keywords(kwnames);
            if (keywords == null) {
                return null; // an unknown keyword: TypeError set
            }
            MemorySegment values = LibPython.memory(args, keywords.length * ADDRESS.byteSize());
            for (int i = 0; i < keywords.length; i++) {
                long value = values.getAtIndex(JAVA_LONG, i);
                switch (keywords[i]) {
                    case STREAM -> stream = value;
                    case MAX_VERSION -> maxVersion = value;
                    case DL_DEVICE -> dlDevice = value;
                    default -> copy = value;
                }
            }
        }
        long none = LibPython.NONE.address();
        if (dlDevice != 0 && dlDevice != none) {
            long[] asked = new long[2];
            if (!intPair(MemorySegment.ofAddress(dlDevice), asked)) {
                return null;
            }
            if (asked[0] != deviceType || asked[1] != deviceId) {
                return raise(LibPythonErrors.BUFFER_ERROR, "this Java tensor lives on device (" + deviceType + ", " + deviceId
                        + ") and cannot be exported to (" + asked[0] + ", " + asked[1] + ")");
            }
        }
        ExportRequest.Copy copyRequest = ExportRequest.Copy.IF_NEEDED;
        if (copy != 0 && copy != none) {
            if (copy == LibPython.TRUE.address()) {
                copyRequest = ExportRequest.Copy.ALWAYS;
            } else if (copy == LibPython.FALSE.address()) {
                copyRequest = ExportRequest.Copy.NEVER;
            } else {
                return raise(LibPythonErrors.TYPE_ERROR, "copy must be None, True or False, not " + repr(MemorySegment.ofAddress(copy)));
            }
        }
        boolean versioned = false;
        if (maxVersion != 0 && maxVersion != none) {
            Boolean known = VERSION_TUPLES.find(maxVersion);
            if (known != null) {
                versioned = known;
            } else {
                Boolean read = readVersion(maxVersion);
                if (read == null) {
                    return null;
                }
                versioned = read;
            }
        }
        OptionalLong streamRequest = OptionalLong.empty();
        if (stream != 0 && stream != none) {
            long value = slowInt(MemorySegment.ofAddress(stream));
            if (value == -1 && LibPythonErrors.errOccurred()) {
                return null;
            }
            streamRequest = OptionalLong.of(value);
        }
        return request(versioned ? ManagedTensorKind.VERSIONED : ManagedTensorKind.LEGACY, streamRequest, copyRequest);
    }

    /**
     * {@return whether {@code max_version}'s major version is at least 1, or null with a Python
     * exception set} Remembers the answer for an exact tuple whose first item is an exact int:
     * neither can change, and the reference kept for the process means the address cannot name
     * another object.
     */
    private static Boolean readVersion(long maxVersion) {
        MemorySegment tuple = MemorySegment.ofAddress(maxVersion);
        boolean immutable = false;
        long value;
        MemorySegment major = LibPythonObjects.tupleGetItem(tuple, 0); // borrowed
        if (major.address() != 0) {
            immutable = LibPython.typeOf(maxVersion) == LibPython.TUPLE_TYPE.address()
                    && LibPython.typeOf(major.address()) == LibPython.LONG_TYPE.address();
            value = LibPythonObjects.longAsLong(major);
            if (value == -1 && LibPythonErrors.errOccurred()) {
                LibPythonErrors.errClear();
                value = slowInt(major);
            }
        } else {
            LibPythonErrors.errClear(); // not a tuple: any sequence will do
            MemorySegment item = LibPythonObjects.sequenceGetItem(tuple, 0);
            if (item.address() == 0) {
                return null;
            }
            value = slowInt(item);
            LibPythonObjects.decRef(item);
        }
        if (value == -1 && LibPythonErrors.errOccurred()) {
            return null;
        }
        boolean versioned = value >= 1;
        if (immutable) {
            VERSION_TUPLES.remember(maxVersion, versioned);
        }
        return versioned;
    }

    /** {@code int(x)} as a {@code long}; -1 with an exception set on failure. */
    private static long slowInt(MemorySegment object) {
        MemorySegment integer = LibPythonObjects.numberLong(object);
        if (integer.address() == 0) {
            return -1;
        }
        long value = LibPythonObjects.longAsLong(integer);
        LibPythonObjects.decRef(integer);
        return value;
    }

    /** Reads {@code (int(pair[0]), int(pair[1]))}; false with an exception set on failure. */
    private static boolean intPair(MemorySegment pair, long[] out) {
        for (int i = 0; i < 2; i++) {
            MemorySegment item = LibPythonObjects.sequenceGetItem(pair, i);
            if (item.address() == 0) {
                return false;
            }
            out[i] = slowInt(item);
            LibPythonObjects.decRef(item);
            if (out[i] == -1 && LibPythonErrors.errOccurred()) {
                return false;
            }
        }
        return true;
    }

    /** {@code repr(object)}, or "?" (the error cleared). */
    private static String repr(MemorySegment object) {
        MemorySegment text = LibPythonObjects.objectRepr(object);
        if (text.address() == 0) {
            LibPythonErrors.errClear();
            return "?";
        }
        try {
            return PythonStrings.utf8(text);
        } finally {
            LibPythonObjects.decRef(text);
        }
    }

    /**
     * {@return which keyword each name of {@code kwnames} is, or null with a {@code TypeError} set
     * for a name {@code __dlpack__} does not take}
     */
    private static int[] keywords(long kwnamesAddress) {
        int[] known = KEYWORD_TUPLES.find(kwnamesAddress);
        if (known != null) {
            return known;
        }
        MemorySegment kwnames = MemorySegment.ofAddress(kwnamesAddress);
        long count = LibPythonObjects.tupleSize(kwnames);
        if (count < 0) {
            LibPythonErrors.errClear();
            raise(LibPythonErrors.TYPE_ERROR, "__dlpack__() got keyword names that are not a tuple");
            return null;
        }
        int[] keywords = new int[(int) count];
        for (int i = 0; i < count; i++) {
            MemorySegment name = LibPythonObjects.tupleGetItem(kwnames, i);
            keywords[i] = keyword(name);
            if (keywords[i] < 0) {
                raise(LibPythonErrors.TYPE_ERROR, "__dlpack__() got an unexpected keyword argument '" + PythonStrings.utf8(name)
                        + "'; it takes stream, max_version, dl_device and copy");
                return null;
            }
        }
        KEYWORD_TUPLES.remember(kwnamesAddress, keywords);
        return keywords;
    }

    private static int keyword(MemorySegment name) {
        for (int k = 0; k < INTERNED.length; k++) {
            if (INTERNED[k] == name.address()) {
                return k;
            }
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment chars = LibPythonObjects.unicodeUtf8(name, arena);
            if (chars.address() == 0) {
                LibPythonErrors.errClear();
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

    /** Sets a Python exception and returns null; never throws. */
    private static ExportRequest raise(MemorySegment type, String message) {
        PythonErrors.raise(type, message);
        return null;
    }
}
