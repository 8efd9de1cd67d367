package org.jdlpack.python.internal.bridge;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import java.lang.System.Logger.Level;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.ManagedTensorKind;
import org.jdlpack.abi.plumbing.Diagnostics;
import org.jdlpack.python.internal.capi.EmbeddedPython;
import org.jdlpack.python.internal.capi.Gil;
import org.jdlpack.python.internal.capi.LibPython;

/**
 * Keeps a Python producer's deleter from running after the interpreter is finalized.
 *
 * <p>A deleter written for Python (NumPy's, CuPy's) drops Python references, which crashes the
 * process once the interpreter is gone. A tensor imported from Python may be closed by Java at any
 * time, also after whoever embeds Python finalized it. So right after the import, the struct's
 * deleter field (ours now: the capsule was consumed) is pointed at this guard, which calls the producer's
 * deleter while Python lives, and afterwards leaks the tensor and counts it in
 * {@code PythonRuntime.leakedAfterFinalization()}, as NumPy itself does.
 *
 * <p>Thread safety: any thread, virtual threads included; the table of original deleters is
 * concurrent. {@link #install} writes it and so runs without the GIL. The guard is an upcall from
 * whoever calls the deleter: the native frame below pins a virtual thread to its carrier for the
 * whole call, so the producer's deleter (which takes the GIL itself) starts and ends on one OS
 * thread.
 */
public final class ForeignDeleterGuard {

    private static final Map<Long, Long> ORIGINAL_DELETERS = new ConcurrentHashMap<>();
    private static final MemorySegment GUARD = EmbeddedPython.upcalls().stub(MethodHandles.lookup(), "guard",
            FunctionDescriptor.ofVoid(ADDRESS));

    private ForeignDeleterGuard() {
    }

    /**
     * Interposes the guard in front of the deleter of a tensor just imported, or closes it (the
     * producer's deleter, still in place) if that fails. Only after the import: the import is what
     * proves the pointer was not Java's already, and a refused second take must leave the first
     * owner's struct as it was. The tensor must not have been handed out yet: its deleter field
     * is read here and rewritten. Not under the GIL: the table write may block.
     */
    public static void installOrClose(ImportedTensor imported) {
        try {
            install(imported.kind(), MemorySegment.ofAddress(imported.managedTensorAddress()));
        } catch (RuntimeException | Error e) {
            imported.close();
            throw e;
        }
    }

    private static void install(ManagedTensorKind kind, MemorySegment pointer) {
        MemorySegment struct = LibPython.memory(pointer, kind.structSize());
        long deleter = struct.get(JAVA_LONG_UNALIGNED, kind.deleterOffset());
        if (deleter == 0) {
            return; // a NULL deleter is never called
        }
        ORIGINAL_DELETERS.put(pointer.address(), deleter);
        struct.set(JAVA_LONG_UNALIGNED, kind.deleterOffset(), GUARD.address());
    }

    /** {@return how many guarded deleters have not run yet} */
    public static int pending() {
        return ORIGINAL_DELETERS.size();
    }

    /** The guard: the consumer's deleter call. Never throws. */
    @SuppressWarnings("unused") // the upcall target
    private static void guard(MemorySegment self) {
        try {
            Long deleter = ORIGINAL_DELETERS.remove(self.address());
            if (deleter == null) {
                Diagnostics.report(Level.ERROR, "deleter called for 0x" + Long.toHexString(self.address())
                        + ", which holds no live Python import; ignored", null);
                return;
            }
            if (!Gil.pythonAlive()) {
                Gil.LEAKED_AFTER_FINALIZATION.incrementAndGet();
                return;
            }
            LibPython.callPointer(MemorySegment.ofAddress(deleter), self);
        } catch (Throwable t) {
            Diagnostics.report(Level.ERROR, "a Python producer's deleter failed", t);
        }
    }
}
