package org.jdlpack.cuda;

import java.util.function.Supplier;

/**
 * The calling thread's CUDA current device, switched for one action and put back afterwards.
 *
 * <p>The current device is per-thread state that other libraries on the same thread rely on: a
 * deleter runs on the consumer's thread (PyTorch's, say), and a thread that calls into jdlpack may
 * be running CUDA work of its own. So nothing here leaves it changed: the previous device is read
 * before and set back after, and nothing is set when it is already the right one.
 *
 * <p>Thread safety: immutable; each call acts on the calling thread only.
 */
final class CurrentDevice {

    /** Where the current device is read and set: libcudart, or a recording stand-in in tests. */
    interface Binding {
        /** {@return the calling thread's current device} */
        int get();

        /** Makes {@code device} current on the calling thread. */
        void set(int device);
    }

    /** The real current device, through {@code cudaGetDevice} and {@code cudaSetDevice}. */
    static final CurrentDevice CUDART = new CurrentDevice(new Binding() {
        @Override
        public int get() {
            return CudartDevices.getDevice();
        }

        @Override
        public void set(int device) {
            CudartDevices.setDevice(device);
        }
    });

    private final Binding binding;

    CurrentDevice(Binding binding) {
        this.binding = binding;
    }

    /** Runs {@code action} with {@code device} current, then makes the previous device current again. */
    void run(int device, Runnable action) {
        call(device, () -> {
            action.run();
            return null;
        });
    }

    /** Calls {@code action} with {@code device} current, then makes the previous device current again. */
    <T> T call(int device, Supplier<T> action) {
        int previous = binding.get();
        if (previous == device) {
            return action.get();
        }
        binding.set(device);
        T result;
        try {
            result = action.get();
        } catch (RuntimeException | Error e) {
            try {
                binding.set(previous);
            } catch (RuntimeException restoring) {
                e.addSuppressed(restoring);
            }
            throw e;
        }
        binding.set(previous);
        return result;
    }
}
