package org.jdlpack.python.internal.bridge;

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

/**
 * The DLPack capsule protocol of the Python array API: a managed tensor travels in a
 * {@code PyCapsule} named {@code dltensor} (legacy) or {@code dltensor_versioned}; the consumer
 * renames it {@code used_dltensor} / {@code used_dltensor_versioned} when it takes ownership, and
 * the capsule's destructor calls the deleter only while the capsule is still unconsumed.
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

    private Capsules() {
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
        MemorySegment capsule = LibPythonCapsules.capsuleNew(pointer, name(kind), DESTRUCTOR);
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
            MemorySegment capsule = MemorySegment.ofAddress(capsuleAddress);
            // This destructor is only on capsules made here, with one of these two name pointers;
            // a consumer that took the tensor renamed the capsule, so its name pointer is another.
            long name = LibPythonCapsules.ownCapsuleGetName(capsule).address();
            ManagedTensorKind kind = name == VERSIONED.address() ? ManagedTensorKind.VERSIONED
                    : name == LEGACY.address() ? ManagedTensorKind.LEGACY : null;
            if (kind == null) {
                return; // a used capsule: its consumer owns the tensor now
            }
            MemorySegment pointer = LibPythonCapsules.capsuleGetPointer(capsule, name(kind));
            ImportedTensor.discard(kind, pointer); // no object, no lock: this is a deleter's context
            UNCONSUMED_RELEASES.incrementAndGet();
        } catch (Throwable t) {
            Diagnostics.report(Level.ERROR, "DLPack capsule destructor failed", t);
        }
    }
}
