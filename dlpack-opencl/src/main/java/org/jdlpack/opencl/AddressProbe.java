package org.jdlpack.opencl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

import org.jdlpack.abi.plumbing.Downcalls;

/**
 * Reads a word at an address from outside (a {@code DLTensor.data} said to be a {@code cl_mem})
 * before any OpenCL call trusts it. A load from an unmapped address would crash the JVM; write(2)
 * from it into a pipe reports EFAULT instead. This is libc, not libOpenCL, hence not part of the
 * {@link CL} call layer.
 *
 * <p>Thread safety: probes take turns on the one pipe.
 */
@SuppressWarnings("restricted")
final class AddressProbe {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle PIPE = libc("pipe", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle WRITE = libc("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle READ = libc("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    /** The read and the write end. */
    private static final int[] PROBE_PIPE = openPipe();

    private AddressProbe() {
    }

    private static MethodHandle libc(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), descriptor);
    }

    private static int[] openPipe() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fds = arena.allocate(JAVA_INT, 2);
            if ((int) PIPE.invokeExact(fds) != 0) {
                throw new ExceptionInInitializerError("pipe() failed");
            }
            return fds.toArray(JAVA_INT);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Reads the 8 bytes at {@code address} without risking a crash.
     *
     * @return the word, or empty when the address is not readable
     */
    static synchronized Optional<Long> peekWord(long address) {
        try (Arena arena = Arena.ofConfined()) {
            long written = (long) WRITE.invokeExact(PROBE_PIPE[1], MemorySegment.ofAddress(address), 8L);
            if (written != 8) {
                return Optional.empty();
            }
            MemorySegment word = arena.allocate(JAVA_LONG);
            long read = (long) READ.invokeExact(PROBE_PIPE[0], word, 8L);
            return read == 8 ? Optional.of(word.get(JAVA_LONG, 0)) : Optional.empty();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
