package org.jdlpack.python.internal.bridge;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.plumbing.Diagnostics;
import org.jdlpack.python.internal.capi.EmbeddedPython;
import org.jdlpack.python.internal.capi.Gil;
import org.jdlpack.python.internal.capi.LibPython;
import org.jdlpack.python.internal.capi.LibPythonCapsules;
import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;

/**
 * The DLPack capsule protocol of the Python array API: a managed tensor travels in a
 * {@code PyCapsule} named {@code dltensor} (legacy) or {@code dltensor_versioned}; the consumer
 * renames it {@code used_dltensor} / {@code used_dltensor_versioned} when it takes ownership, and
 * the capsule's destructor calls the deleter only while the capsule is still unconsumed.
 *
 * <p><b>Destructors.</b> Every {@code np.from_dlpack(x)} consumes a capsule, whose destructor then
 * runs and does nothing; as an FFM upcall that nothing cost about 50 ns of CPU, an eighth of the
 * call. Once NumPy is loaded, capsules get NumPy's own DLPack capsule destructors instead (C
 * functions that do exactly what the spec asks, taken from capsules NumPy makes and checked with a
 * probe tensor first); before that, and where the check fails, this class's {@link #destructor}.
 *
 * <p>Every method here runs with the GIL held. {@link #take} runs inside a {@link Gil#call} body and
 * so makes only downcalls (nothing that could unmount a virtual thread); {@link #wrap} and the
 * destructor run in upcalls, where a virtual thread is pinned to its carrier by the native frame
 * below it, so the Java code they run (our export's deleter on a failure) cannot migrate it.
 * Thread safety: static, stateless but for counters.
 */
public final class Capsules {

    /**
     * A consumed capsule's (or an exchange API's) managed tensor, now owned by the caller.
     *
     * @param jdlpackDeleter whether its deleter is jdlpack's own (a Java tensor's export), which
     *                       needs no Python and so no guard against a finalized interpreter
     */
    public record Taken(ManagedTensorKind kind, MemorySegment pointer, boolean jdlpackDeleter) {
    }

    /** Destructor calls that released an unconsumed tensor (nobody took the capsule). */
    public static final AtomicLong UNCONSUMED_RELEASES = new AtomicLong();

    private static final MemorySegment VERSIONED = Arena.global().allocateFrom("dltensor_versioned");
    private static final MemorySegment LEGACY = Arena.global().allocateFrom("dltensor");
    private static final MemorySegment USED_VERSIONED = Arena.global().allocateFrom("used_dltensor_versioned");
    private static final MemorySegment USED_LEGACY = Arena.global().allocateFrom("used_dltensor");
    /** Takes the capsule as a 64-bit integer (the same register on LP64 ABIs): one call per consumed capsule, and no segment boxed for it. */
    private static final MemorySegment DESTRUCTOR = EmbeddedPython.upcalls().stub(MethodHandles.lookup(), "destructor",
            FunctionDescriptor.ofVoid(JAVA_LONG));

    /**
     * Where a capsule keeps its name pointer, found by {@link #install}, or 0 where it was not
     * found: the destructor then asks {@code PyCapsule_GetName}. CPython's capsule is the object
     * header, the pointer and then the name (a struct private to CPython, so checked once, on a
     * capsule made for it, rather than assumed); reading it saves the destructor a downcall on
     * every consumed capsule.
     */
    private static volatile long nameOffset;

    /** The probe's deleter: it counts its calls and keeps the last tensor; under the GIL, by {@link #behavesAsDLPackSays} only. */
    private static final MemorySegment PROBE_DELETER = EmbeddedPython.upcalls().stub(MethodHandles.lookup(), "probeDeleter",
            FunctionDescriptor.ofVoid(JAVA_LONG));
    /** A zeroed stand-in for a managed tensor, large enough for either struct: the probe's capsules carry it. */
    private static final MemorySegment PROBE_TENSOR = Arena.global().allocate(128, 8);
    private static final MemorySegment NUMPY = Arena.global().allocateFrom("numpy");
    /** How many exports go by between two looks for NumPy while it is not loaded. */
    private static final int LOOK_INTERVAL = 1024;
    private static long probeCalls;
    private static long probeLast;

    /**
     * The destructors {@link #wrap} puts on capsules: this class's own (an upcall) until NumPy's
     * are adopted ({@link #lookForNumPy}). Written under the GIL; read under it.
     */
    private static volatile MemorySegment versionedDestructor = DESTRUCTOR;
    private static volatile MemorySegment legacyDestructor = DESTRUCTOR;
    /** Whether the look for NumPy is over (its destructors adopted or refused). */
    private static volatile boolean adopted;
    /** Exports until {@link #wrap} looks for NumPy again; only under the GIL. */
    private static int untilLook;

    private Capsules() {
    }

    /**
     * {@return whether the capsules get NumPy's DLPack capsule destructors} NumPy's are C
     * functions that do what the DLPack spec asks of a producer's destructor and nothing else:
     * nothing for a capsule renamed {@code used_...}, the tensor's deleter for one still named as
     * made. A consumed capsule (every {@code np.from_dlpack(x)}) then dies without an upcall.
     */
    public static boolean usesNumPysDestructors() {
        return versionedDestructor.address() != DESTRUCTOR.address();
    }

    /**
     * Looks for NumPy in {@code sys.modules} and, where it is loaded, takes the destructors of two
     * capsules it makes and adopts them if the probe ({@link #behavesAsDLPackSays}) finds that they
     * do what the spec asks. In an upcall, with the GIL; calls NumPy's C code through the C API
     * only. A failure keeps this class's own destructor.
     */
    private static void lookForNumPy() {
        MemorySegment numpy = LibPythonObjects.dictGetItemString(LibPythonObjects.importGetModuleDict(), NUMPY); // borrowed
        if (numpy.address() == 0) {
            return; // not loaded (yet)
        }
        adopted = true; // found or refused: NumPy is loaded, and looking again would find the same
        MemorySegment[] capsules = numpyCapsules(numpy);
        try {
            MemorySegment versioned = standardDestructor(capsules[0], ManagedTensorKind.VERSIONED);
            MemorySegment legacy = standardDestructor(capsules[1], ManagedTensorKind.LEGACY);
            if (versioned != null && legacy != null) {
                versionedDestructor = versioned;
                legacyDestructor = legacy;
            }
        } finally {
            LibPythonObjects.decRef(capsules[0]); // NumPy's capsules die unconsumed: their destructors release NumPy's exports
            LibPythonObjects.decRef(capsules[1]);
        }
    }

    /**
     * {@return a versioned and a legacy capsule of a one-element NumPy array, NULL where NumPy
     * failed (its exception cleared)} Through the C API only: no Python frame, so nothing a
     * profiler or tracer of the caller's code would see.
     */
    private static MemorySegment[] numpyCapsules(MemorySegment numpy) {
        MemorySegment[] capsules = {MemorySegment.NULL, MemorySegment.NULL};
        MemorySegment array = MemorySegment.NULL;
        MemorySegment dunder = MemorySegment.NULL;
        MemorySegment keywords = MemorySegment.NULL;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment zeros = LibPythonObjects.objectGetAttrString(numpy, arena.allocateFrom("zeros"));
            MemorySegment shape = LibPythonObjects.tupleNew(1);
            if (zeros.address() != 0 && shape.address() != 0) {
                LibPythonObjects.tupleSetItem(shape, 0, LibPythonObjects.longFromLong(1)); // steals the int
                array = LibPythonObjects.callObject(zeros, shape);
            }
            LibPythonObjects.decRef(zeros);
            LibPythonObjects.decRef(shape);
            dunder = LibPythonObjects.unicodeInternFromString(arena.allocateFrom("__dlpack__"));
            keywords = LibPythonObjects.tupleNew(1);
            MemorySegment version = LibPythonObjects.tupleNew(2);
            MemorySegment maxVersion = LibPythonObjects.unicodeInternFromString(arena.allocateFrom("max_version"));
            if (array.address() != 0 && dunder.address() != 0 && keywords.address() != 0 && version.address() != 0
                    && maxVersion.address() != 0) {
                LibPythonObjects.tupleSetItem(keywords, 0, maxVersion); // steals the name
                maxVersion = MemorySegment.NULL;
                LibPythonObjects.tupleSetItem(version, 0, LibPythonObjects.longFromLong(1));
                LibPythonObjects.tupleSetItem(version, 1, LibPythonObjects.longFromLong(0));
                MemorySegment arguments = arena.allocate(ADDRESS, 2);
                arguments.setAtIndex(ADDRESS, 0, array);
                arguments.setAtIndex(ADDRESS, 1, version);
                capsules[0] = LibPythonObjects.vectorcallMethod(dunder, arguments, 1, keywords); // array.__dlpack__(max_version=(1, 0))
                if (capsules[0].address() == 0) {
                    LibPythonErrors.errClear(); // a NumPy before 2.1 has no max_version: no call with an exception pending
                }
                capsules[1] = LibPythonObjects.vectorcallMethod(dunder, arguments, 1, MemorySegment.NULL); // array.__dlpack__()
            }
            LibPythonObjects.decRef(version);
            LibPythonObjects.decRef(maxVersion);
        } finally {
            LibPythonObjects.decRef(array);
            LibPythonObjects.decRef(dunder);
            LibPythonObjects.decRef(keywords);
            LibPythonErrors.errClear();
        }
        return capsules;
    }

    /** {@return {@code capsule}'s destructor if it does what DLPack asks of a {@code kind} capsule's, else null} */
    private static MemorySegment standardDestructor(MemorySegment capsule, ManagedTensorKind kind) {
        if (capsule.address() == 0) {
            LibPythonErrors.errClear();
            return null;
        }
        MemorySegment destructor = LibPythonCapsules.capsuleGetDestructor(capsule);
        if (destructor.address() == 0) {
            LibPythonErrors.errClear();
            return null;
        }
        return behavesAsDLPackSays(destructor, kind) ? destructor : null;
    }

    /**
     * The probe: {@code destructor} on a capsule of the probe tensor must call its deleter once,
     * with the tensor, when the capsule dies unconsumed, and not at all once the capsule was
     * renamed {@code used_...}.
     */
    private static boolean behavesAsDLPackSays(MemorySegment destructor, ManagedTensorKind kind) {
        PROBE_TENSOR.fill((byte) 0);
        PROBE_TENSOR.set(ADDRESS, kind.deleterOffset(), PROBE_DELETER);
        long before = probeCalls;
        MemorySegment unconsumed = LibPythonCapsules.capsuleNew(PROBE_TENSOR, name(kind), destructor);
        if (unconsumed.address() == 0) {
            LibPythonErrors.errClear();
            return false;
        }
        LibPythonObjects.decRef(unconsumed);
        if (probeCalls != before + 1 || probeLast != PROBE_TENSOR.address() || LibPythonErrors.errOccurred()) {
            LibPythonErrors.errClear();
            return false;
        }
        MemorySegment consumed = LibPythonCapsules.capsuleNew(PROBE_TENSOR, name(kind), destructor);
        if (consumed.address() == 0) {
            LibPythonErrors.errClear();
            return false;
        }
        boolean renamed = LibPythonCapsules.capsuleSetName(consumed, usedName(kind)) == 0;
        LibPythonObjects.decRef(consumed);
        boolean kept = renamed && probeCalls == before + 1 && !LibPythonErrors.errOccurred();
        LibPythonErrors.errClear();
        return kept;
    }

    /** The probe tensor's deleter. Never throws. */
    @SuppressWarnings("unused") // the upcall target
    private static void probeDeleter(long managed) {
        probeCalls++;
        probeLast = managed;
    }

    /** {@return whether the destructor reads a capsule's name from its memory (CPython's layout was found)} */
    public static boolean readsNamesDirectly() {
        return nameOffset > 0;
    }

    /**
     * Finds where a capsule keeps its name: makes a capsule with known pointer and name and reads
     * them back from its memory. Needs the GIL; only downcalls; before any DLPack capsule is made.
     */
    static void install() {
        MemorySegment probe = LibPythonCapsules.capsuleNew(USED_LEGACY, LEGACY, MemorySegment.NULL);
        if (probe.address() == 0) {
            LibPythonErrors.errClear();
            nameOffset = 0; // the destructor asks Python
            return;
        }
        long header = EmbeddedPython.objectSize();
        MemorySegment fields = LibPython.memory(probe, header + 2 * ADDRESS.byteSize());
        if (fields.get(JAVA_LONG, header) == USED_LEGACY.address()
                && fields.get(JAVA_LONG, header + ADDRESS.byteSize()) == LEGACY.address()
                && LibPythonCapsules.ownCapsuleGetName(probe).address() == LEGACY.address()) {
            nameOffset = header + ADDRESS.byteSize();
        } else {
            nameOffset = 0;
        }
        LibPythonObjects.decRef(probe);
    }

    private static MemorySegment name(ManagedTensorKind kind) {
        return kind == ManagedTensorKind.VERSIONED ? VERSIONED : LEGACY;
    }

    private static MemorySegment usedName(ManagedTensorKind kind) {
        return kind == ManagedTensorKind.VERSIONED ? USED_VERSIONED : USED_LEGACY;
    }

    /**
     * Puts a managed tensor the caller owns into a new capsule, which then owns it. On failure the
     * tensor's deleter has run and a Python exception is set.
     *
     * @return the new reference, or NULL
     */
    static MemorySegment wrap(ManagedTensorKind kind, MemorySegment pointer) {
        if (!adopted && --untilLook < 0) {
            untilLook = LOOK_INTERVAL;
            try {
                lookForNumPy();
            } catch (RuntimeException | Error e) { // the export in hand must still reach a capsule
                adopted = true;
                Diagnostics.report(Level.ERROR, "looking for NumPy's DLPack capsule destructors failed; dlpack-python's own stay", e);
            }
        }
        MemorySegment capsule = LibPythonCapsules.capsuleNew(pointer, name(kind),
                kind == ManagedTensorKind.VERSIONED ? versionedDestructor : legacyDestructor);
        if (capsule.address() == 0) {
            ImportedTensor.discard(kind, pointer);
        }
        return capsule;
    }

    /**
     * Takes the managed tensor out of an unconsumed DLPack capsule and renames it {@code used_...}.
     *
     * @throws IllegalArgumentException if it is not an unconsumed DLPack capsule
     */
    public static Taken take(MemorySegment capsule) {
        for (ManagedTensorKind kind : new ManagedTensorKind[] {ManagedTensorKind.VERSIONED, ManagedTensorKind.LEGACY}) {
            if (LibPythonCapsules.capsuleIsValid(capsule, name(kind))) {
                MemorySegment pointer = LibPythonCapsules.capsuleGetPointer(capsule, name(kind));
                if (LibPythonCapsules.capsuleSetName(capsule, usedName(kind)) != 0) {
                    LibPythonErrors.errClear();
                    throw new IllegalStateException("PyCapsule_SetName failed on a " + kind.structName() + " capsule");
                }
                return new Taken(kind, pointer, false);
            }
        }
        MemorySegment name = LibPythonCapsules.capsuleGetName(capsule);
        LibPythonErrors.errClear(); // not a capsule at all sets TypeError
        String described = name.address() == 0 ? "no DLPack capsule" : "a capsule named '" + LibPython.string(name) + "'";
        throw new IllegalArgumentException("__dlpack__ returned " + described
                + ", not an unconsumed 'dltensor_versioned' or 'dltensor' capsule (a used_ name means it was consumed already)");
    }

    /**
     * The capsule destructor: Python calls it with the GIL held, on any thread (a virtual thread is
     * pinned here by the native frame below), possibly while an exception is pending, which it
     * leaves alone (it calls nothing that sets or clears one). Never throws.
     */
    @SuppressWarnings("unused") // the upcall target
    private static void destructor(long capsuleAddress) {
        try {
            // This destructor is only on capsules made here, with one of these two name pointers;
            // a consumer that took the tensor renamed the capsule, so its name pointer is another.
            long offset = nameOffset;
            long name = offset > 0 ? LibPython.memory(capsuleAddress, offset + ADDRESS.byteSize()).get(JAVA_LONG, offset)
                    : LibPythonCapsules.ownCapsuleGetName(MemorySegment.ofAddress(capsuleAddress)).address();
            ManagedTensorKind kind = name == VERSIONED.address() ? ManagedTensorKind.VERSIONED
                    : name == LEGACY.address() ? ManagedTensorKind.LEGACY : null;
            if (kind == null) {
                return; // a used capsule: its consumer owns the tensor now
            }
            MemorySegment pointer = LibPythonCapsules.capsuleGetPointer(MemorySegment.ofAddress(capsuleAddress), name(kind));
            ImportedTensor.discard(kind, pointer); // no object, no lock: this is a deleter's context
            UNCONSUMED_RELEASES.incrementAndGet();
        } catch (Throwable t) {
            Diagnostics.report(Level.ERROR, "DLPack capsule destructor failed", t);
        }
    }
}
