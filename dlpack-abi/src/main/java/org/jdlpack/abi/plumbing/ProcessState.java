package org.jdlpack.abi.plumbing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The process-wide state of jdlpack's other modules (dlpack-python's interpreter and its upcall
 * stubs), released together with dlpack-abi's by {@code org.jdlpack.abi.DLPackRuntime.release()}.
 * A module registers its state when it starts it.
 *
 * <p>Thread safety: any thread.
 *
 * @since 0.1
 */
public final class ProcessState {

    /** One module's releasable state. */
    public interface Part {

        /** {@return what is still live, in words for an exception message (counts and what to close); empty when nothing is} */
        String live();

        /**
         * Releases the state; called only when {@link #live()} was empty, with no jdlpack call running.
         *
         * @throws IllegalStateException if it cannot be released (a message that says why and what to do)
         */
        void release();
    }

    private static final CopyOnWriteArrayList<Part> PARTS = new CopyOnWriteArrayList<>();

    private ProcessState() {
    }

    /**
     * Registers a module's state; registering the same part again does nothing.
     *
     * @param part the state
     */
    public static void register(Part part) {
        PARTS.addIfAbsent(part);
    }

    /**
     * Forgets a module's state (it released itself, or never started).
     *
     * @param part the state
     */
    public static void unregister(Part part) {
        PARTS.remove(part);
    }

    /** {@return the registered parts, in registration order} */
    public static List<Part> parts() {
        return List.copyOf(PARTS);
    }
}
