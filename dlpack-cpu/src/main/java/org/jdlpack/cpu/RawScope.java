package org.jdlpack.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.UnaryOperator;

import org.jdlpack.abi.plumbing.NativeAccess;

/**
 * The scope of the raw segments a tensor hands out ({@link HostTensorView#segment()},
 * {@link OwnedHostTensor#spec()}) where the memory's own segment outlives the tensor's release: a
 * {@link HostTensorPool} block (the pool's arena), or memory another library allocated and frees
 * only when the release tells it to (an ONNX Runtime output). The scope is a shared arena made at
 * the first raw segment asked for and closed by {@link #end()}, so a tensor whose raw memory
 * nobody asks for (the accessors, copies, streams and exports need none) costs no arena and no
 * JVM-wide handshake. Refers to no tensor (the safety net must be able to collect it).
 *
 * <p>Thread safety: any thread; the two methods are ordered by this object's monitor.
 */
final class RawScope implements UnaryOperator<MemorySegment> {

    /** Says what the memory is after the release, in the refusal of a raw segment asked for then. */
    private final String afterRelease;
    /** The raw segments' scope, made on demand; guarded by this. */
    private Arena scope;
    /** Whether {@link #end()} began; guarded by this: no scope is made after it. */
    private boolean ended;

    RawScope(String afterRelease) {
        this.afterRelease = afterRelease;
    }

    /** {@return {@code segment} (part of the memory) in a scope that ends at {@link #end()}} */
    @Override
    @SuppressWarnings("restricted") // the same address and size, in a scope that ends before the memory is freed or reused
    public synchronized MemorySegment apply(MemorySegment segment) {
        if (ended) {
            throw new IllegalStateException("this tensor was released; " + afterRelease);
        }
        if (scope == null) {
            scope = Arena.ofShared();
        }
        boolean wasDisabled = NativeAccess.disabled(RawScope.class);
        MemorySegment scoped;
        try {
            scoped = segment.reinterpret(scope, null);
        } catch (IllegalCallerException e) {
            throw NativeAccess.denied(RawScope.class, e);
        }
        NativeAccess.warnIfWasDisabled(RawScope.class, wasDisabled);
        return scoped;
    }

    /**
     * Ends every raw segment handed out, before the memory is freed or reused; a second call does
     * nothing more.
     *
     * @throws IllegalStateException if a raw segment is held by a call in progress (a downcall, a
     *                               buffer's I/O): the memory must then be neither freed nor reused
     */
    void end() {
        Arena open;
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            open = scope;
        }
        if (open != null) {
            open.close();
        }
    }
}
