package org.jdlpack.python.internal.bridge;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.DLDeviceType;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.python.internal.capi.LibPython;
import org.jdlpack.python.internal.capi.LibPythonCapsules;
import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;
import org.jdlpack.python.internal.objects.PythonError;
import org.jdlpack.python.internal.objects.PythonErrors;

/**
 * The consumer side of the DLPack 1.3 C exchange API, for {@code PythonRuntime.importTensor}: the
 * table found on an object's type, or none, remembered per type.
 *
 * <p>A type's table is the capsule named {@code "dlpack_exchange_api"} in its attribute
 * {@code __dlpack_c_exchange_api__} (looked up on the type, never the instance). It is used only
 * if its version major is 1, or a table of major 1 is found along its {@code prev_api} chain, and
 * its {@code managed_tensor_from_py_object_no_sync} is not NULL; otherwise the type has none, and
 * its objects are imported through {@code __dlpack__}. Tables in the wild leave slots NULL, so
 * each slot is checked, never trusted. A table pointer that is not NULL but points at garbage
 * cannot be checked: that is the producer's contract, as the header says.
 *
 * <p>A torch tensor whose values are not its memory's (a conjugated or negated view:
 * {@link TorchViewBits}) is given back and imported through {@code __dlpack__}, which refuses it.
 *
 * <p>The answer is remembered per type for the life of the process, as the header allows: up to
 * {@value #CACHE_SIZE} types, each kept alive (one reference) so that its address cannot be reused
 * by another type; types beyond that are looked up on every import. The system property
 * {@value #PROPERTY}{@code =false} turns the exchange API off (every import through
 * {@code __dlpack__}), for comparison and for a producer whose table misbehaves.
 *
 * <p>Every method needs the GIL and makes only downcalls and non-blocking Java. Thread safety:
 * the cache is immutable arrays published through a volatile field; the GIL serialises writers.
 */
public final class ExchangeImports {

    /** The system property that turns the exchange API off for imports. */
    public static final String PROPERTY = "org.jdlpack.python.exchangeApi";
    static final int CACHE_SIZE = 32;
    /** How far along {@code prev_api} a table of major version 1 is looked for. */
    private static final int CHAIN_LIMIT = 8;

    /** Imports that went through a type's exchange API, and those that fell back to {@code __dlpack__}. */
    public static final AtomicLong TAKEN = new AtomicLong();
    public static final AtomicLong FELL_BACK = new AtomicLong();

    private static final boolean ENABLED = !"false".equalsIgnoreCase(System.getProperty(PROPERTY));
    /** {@code DLManagedTensorVersioned.dl_tensor.device.device_type}. */
    private static final long DEVICE_TYPE = ManagedTensorKind.VERSIONED.dlTensorOffset() + 8;
    /** {@code DLManagedTensorVersioned.dl_tensor.dtype.code}, a {@code uint8_t}. */
    private static final long DTYPE_CODE = ManagedTensorKind.VERSIONED.dlTensorOffset() + 20;
    private static final MemorySegment CAPSULE_NAME = Arena.global().allocateFrom(DLPackExchangeAPILayout.CAPSULE_NAME);
    private static final MemorySegment ATTRIBUTE = Arena.global().allocateFrom(DLPackExchangeAPILayout.ATTRIBUTE);

    /** Types seen and what each offers; replaced whole. */
    private static volatile long[] types = new long[0];
    private static volatile Offer[] offers = new Offer[0];

    private ExchangeImports() {
    }

    /** {@return whether imports may use the exchange API: {@value #PROPERTY} is not {@code false}} */
    static boolean enabled() {
        return ENABLED;
    }

    /**
     * What a type offers: its table's {@code managed_tensor_from_py_object_no_sync}, and whether its
     * objects may carry torch's view bits ({@link TorchViewBits#recognises}).
     */
    public record Offer(long function, boolean viewBits) {
        static final Offer NONE = new Offer(0, false);
    }

    /** {@return what {@code object}'s type offers, {@link Offer#NONE} if no usable table} Leaves no exception set. */
    static Offer offerOf(MemorySegment object) {
        if (!ENABLED) {
            return Offer.NONE;
        }
        MemorySegment type = LibPythonObjects.objectType(object);
        if (type.address() == 0) {
            LibPythonErrors.errClear();
            return Offer.NONE;
        }
        long[] seen = types;
        for (int i = 0; i < seen.length; i++) {
            if (seen[i] == type.address()) {
                LibPythonObjects.decRef(type);
                return offers[i];
            }
        }
        long function = lookUp(type);
        Offer offer = function == 0 ? Offer.NONE : new Offer(function, TorchViewBits.recognises(type));
        if (seen.length < CACHE_SIZE) {
            // The reference from PyObject_Type stays with the cache: the type lives for the process.
            Offer[] moreOffers = Arrays.copyOf(offers, seen.length + 1);
            long[] moreTypes = Arrays.copyOf(seen, seen.length + 1);
            moreOffers[seen.length] = offer;
            moreTypes[seen.length] = type.address();
            offers = moreOffers; // written before the types, read after them
            types = moreTypes;
        } else {
            LibPythonObjects.decRef(type);
        }
        return offer;
    }

    /** {@return the usable {@code managed_tensor_from_py_object_no_sync} of a type's table, or 0} */
    private static long lookUp(MemorySegment type) {
        MemorySegment capsule = LibPythonObjects.objectGetAttrString(type, ATTRIBUTE);
        if (capsule.address() == 0) {
            LibPythonErrors.errClear(); // AttributeError: no table
            return 0;
        }
        try {
            if (!LibPythonCapsules.capsuleIsValid(capsule, CAPSULE_NAME)) {
                return 0; // not a capsule of that name (an int, as early drafts had it)
            }
            MemorySegment table = LibPythonCapsules.capsuleGetPointer(capsule, CAPSULE_NAME);
            if (table.address() == 0) {
                LibPythonErrors.errClear();
                return 0;
            }
            return usableFunction(table);
        } finally {
            LibPythonObjects.decRef(capsule);
        }
    }

    /**
     * {@return the {@code managed_tensor_from_py_object_no_sync} of the first table of major version 1
     * along {@code prev_api} from {@code table}, or 0 if there is none or its slot is NULL}
     */
    static long usableFunction(MemorySegment table) {
        MemorySegment current = table;
        for (int step = 0; step < CHAIN_LIMIT && current.address() != 0; step++) {
            MemorySegment header = LibPython.memory(current, DLPackExchangeAPILayout.HEADER_SIZE);
            int major = header.get(JAVA_INT, DLPackExchangeAPILayout.HEADER_VERSION_MAJOR);
            if (major == 1) {
                // Only now is the rest of the table known to have this layout.
                return LibPython.memory(current, DLPackExchangeAPILayout.SIZE)
                        .get(ADDRESS, DLPackExchangeAPILayout.MANAGED_TENSOR_FROM_PY_OBJECT_NO_SYNC).address();
            }
            current = header.get(ADDRESS, DLPackExchangeAPILayout.HEADER_PREV_API);
        }
        return 0;
    }

    /**
     * Takes {@code object}'s tensor through its type's exchange API, if the type has a usable
     * table and the tensor is on the CPU: {@return the owned {@code DLManagedTensorVersioned*},
     * or NULL to import it through {@code __dlpack__}} A tensor on another device is given back
     * (its deleter called) and imported through {@code __dlpack__}: the exchange API does not
     * synchronise streams, and this module has no device runtime to do it with, while
     * {@code __dlpack__(stream=None)} makes the producer order its work before the consumer's. A
     * torch view whose values are not its memory's ({@link TorchViewBits}) is given back too:
     * {@code __dlpack__} refuses it.
     *
     * <p>A tensor from this module's own type (a Java tensor) has jdlpack's deleter, which needs
     * no Python: it is marked so, and is not guarded against a finalized interpreter.
     *
     * @throws PythonError with the producer's Python exception, if it failed
     */
    public static Capsules.Taken tryTake(Arena arena, MemorySegment object) {
        Offer offer = offerOf(object);
        if (offer.function() != 0) {
            MemorySegment pointer = take(arena, MemorySegment.ofAddress(offer.function()), object);
            boolean usable;
            try {
                MemorySegment fields = LibPython.memory(pointer, DTYPE_CODE + 1);
                usable = fields.get(JAVA_INT, DEVICE_TYPE) == DLDeviceType.CPU.code() && !(offer.viewBits()
                        && TorchViewBits.valuesDifferFromMemory(arena, object, Byte.toUnsignedInt(fields.get(JAVA_BYTE, DTYPE_CODE))));
            } catch (RuntimeException | Error e) {
                ImportedTensor.discard(ManagedTensorKind.VERSIONED, pointer); // a failed downcall: the tensor is still given back
                throw e;
            }
            if (usable) {
                TAKEN.incrementAndGet();
                return new Capsules.Taken(ManagedTensorKind.VERSIONED, pointer, offer.function() == ExchangeApi.FROM_PY_OBJECT_ADDRESS);
            }
            ImportedTensor.discard(ManagedTensorKind.VERSIONED, pointer); // no object, no lock: the producer's deleter
        }
        FELL_BACK.incrementAndGet();
        return null;
    }

    /**
     * Calls {@code managed_tensor_from_py_object_no_sync(object, &out)}: {@return the owned
     * {@code DLManagedTensorVersioned*}}
     *
     * @throws PythonError          with the producer's Python exception, if it returned -1, or
     *                               returned 0 and left an exception set (the tensor given back)
     * @throws IllegalStateException if it returned 0 and no tensor
     */
    static MemorySegment take(Arena arena, MemorySegment function, MemorySegment object) {
        MemorySegment out = arena.allocate(ADDRESS);
        int rc = LibPython.callIntPointerPointer(function, object, out);
        MemorySegment pointer = out.get(ADDRESS, 0);
        if (rc != 0) {
            // A failure: whatever out holds is not ours (the header says NULL), so it is left alone.
            throw PythonErrors.pending("the producer's managed_tensor_from_py_object_no_sync returned " + rc);
        }
        if (pointer.address() == 0) {
            LibPythonErrors.errClear();
            throw new IllegalStateException("the producer's managed_tensor_from_py_object_no_sync returned 0 and no tensor");
        }
        if (LibPythonErrors.errOccurred()) {
            // Success with an exception set breaks the C API's contract; left set, it would surface
            // in the next, unrelated call. The exception is taken first, so that the producer's
            // deleter runs with none pending.
            PythonError failure = PythonErrors.pending("the producer's managed_tensor_from_py_object_no_sync returned 0 with "
                    + "a Python exception set; the tensor was given back (its deleter called once)");
            ImportedTensor.discard(ManagedTensorKind.VERSIONED, pointer);
            throw failure;
        }
        return pointer;
    }
}
