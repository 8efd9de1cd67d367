package org.jdlpack.testsupport;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The C test peer, loaded into this JVM: a native library that consumes jdlpack's exports and
 * produces tensors with counting deleters. Its sources are test-support/src/main/c (on the class
 * path as {@code org/jdlpack/testsupport/c/}); {@link NativeBuild} compiles them at test time into
 * {@code $JDLPACK_BUILD_DIR/cpeer} (the module's target/cpeer under Maven).
 *
 * <p>Thread safety: every method may be called from any thread.
 */
@SuppressWarnings("restricted")
public final class CPeer {

    /** A tensor the peer produced: its id in the peer's table and the managed-tensor pointer. */
    public record Produced(int id, MemorySegment pointer, boolean legacy) {
    }

    private static CPeer instance;

    private final MethodHandle sumF32;
    private final MethodHandle fillF32;
    private final MethodHandle field;
    private final MethodHandle delete;
    private final MethodHandle deleteOnThreads;
    private final MethodHandle deleteOnNewThread;
    private final MethodHandle make;
    private final MethodHandle deleterCalls;
    private final MethodHandle deleterThread;
    private final MethodHandle totalDeleterCalls;
    private final MethodHandle currentThread;
    private final MethodHandle reset;
    private final MethodHandle callDeleterOf;
    private final MethodHandle memcpy;
    private final MethodHandle deleteAsync;
    private final MethodHandle makeResult;
    private final MethodHandle consume;
    private final MethodHandle callN;
    private final MethodHandle callNOnNewThread;
    private final MethodHandle join;
    private final MethodHandle gatherF32;
    private final MethodHandle useQuietDeleter;

    private CPeer(Path library) {
        Linker linker = Linker.nativeLinker();
        SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
        sumF32 = linker.downcallHandle(lookup.find("peer_sum_f32").orElseThrow(), FunctionDescriptor.of(JAVA_DOUBLE, ADDRESS, JAVA_INT));
        fillF32 = linker.downcallHandle(lookup.find("peer_fill_f32").orElseThrow(),
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_FLOAT, JAVA_FLOAT));
        field = linker.downcallHandle(lookup.find("peer_field").orElseThrow(), FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_INT, JAVA_INT));
        delete = linker.downcallHandle(lookup.find("peer_delete").orElseThrow(), FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        deleteOnThreads = linker.downcallHandle(lookup.find("peer_delete_on_threads").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT));
        deleteOnNewThread = linker.downcallHandle(lookup.find("peer_delete_on_new_thread").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        make = linker.downcallHandle(lookup.find("peer_make").orElseThrow(), FunctionDescriptor.of(ADDRESS,
                JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_BYTE, JAVA_SHORT,
                JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS));
        deleterCalls = linker.downcallHandle(lookup.find("peer_deleter_calls").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        deleterThread = linker.downcallHandle(lookup.find("peer_deleter_thread").orElseThrow(), FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
        totalDeleterCalls = linker.downcallHandle(lookup.find("peer_total_deleter_calls").orElseThrow(), FunctionDescriptor.of(JAVA_LONG));
        currentThread = linker.downcallHandle(lookup.find("peer_current_thread").orElseThrow(), FunctionDescriptor.of(JAVA_LONG));
        reset = linker.downcallHandle(lookup.find("peer_reset").orElseThrow(), FunctionDescriptor.ofVoid());
        // critical(true): C may read and write Java arrays in place, as a JNI critical region would.
        memcpy = linker.downcallHandle(lookup.find("peer_memcpy").orElseThrow(),
                FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_LONG), Linker.Option.critical(true));
        gatherF32 = linker.downcallHandle(lookup.find("peer_gather_f32").orElseThrow(),
                FunctionDescriptor.ofVoid(ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), Linker.Option.critical(true));
        consume = linker.downcallHandle(lookup.find("peer_consume").orElseThrow(), FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_INT));
        callN = linker.downcallHandle(lookup.find("peer_call_n").orElseThrow(), FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG));
        callNOnNewThread = linker.downcallHandle(lookup.find("peer_call_n_on_new_thread").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        makeResult = linker.downcallHandle(lookup.find("peer_make_result").orElseThrow(),
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS));
        deleteAsync = linker.downcallHandle(lookup.find("peer_delete_async").orElseThrow(),
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_INT));
        join = linker.downcallHandle(lookup.find("peer_join").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
        useQuietDeleter = linker.downcallHandle(lookup.find("peer_use_quiet_deleter").orElseThrow(),
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        callDeleterOf = linker.downcallHandle(lookup.find("peer_call_deleter_of").orElseThrow(),
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, ADDRESS));
    }

    /** Compiles (once per JVM) and loads the peer. */
    public static synchronized CPeer get() {
        if (instance == null) {
            Path library = NativeBuild.compile("libdlpackpeer.so", "-shared", "-fPIC", "peer.c");
            instance = new CPeer(library);
        }
        return instance;
    }

    /**
     * Compiles and runs the layout probe; returns every "name value" pair it printed.
     */
    public static Map<String, Long> probeAbi() {
        Path probe = NativeBuild.compile("abi_probe", "abi_probe.c");
        String output = NativeBuild.run(probe.getParent(), List.of(probe.toString()));
        Map<String, Long> values = new HashMap<>();
        for (String line : output.split("\n")) {
            if (!line.isBlank()) {
                String[] parts = line.trim().split(" ");
                values.put(parts[0], Long.parseLong(parts[1]));
            }
        }
        return values;
    }

    private static int flag(boolean b) {
        return b ? 1 : 0;
    }

    /** Sum of a float32 tensor, read by C through the struct. */
    public double sumF32(MemorySegment managed, boolean legacy) {
        try {
            return (double) sumF32.invokeExact(managed, flag(legacy));
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** C writes start, start + step, ... into a float32 tensor in logical order. */
    public void fillF32(MemorySegment managed, boolean legacy, float start, float step) {
        try {
            fillF32.invokeExact(managed, flag(legacy), start, step);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * A field as C reads it: 0 major, 1 minor, 2 flags, 3 ndim, 4 device_type, 5 device_id, 6 code,
     * 7 bits, 8 lanes, 9 byte_offset, 10 data, 11 strides==NULL, 100+i shape[i], 200+i strides[i].
     */
    public long field(MemorySegment managed, boolean legacy, int which) {
        try {
            return (long) field.invokeExact(managed, flag(legacy), which);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** C calls the deleter on the calling thread. */
    public void delete(MemorySegment managed, boolean legacy) {
        try {
            delete.invokeExact(managed, flag(legacy));
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** C calls the deleters from {@code threads} new pthreads released at once, and joins them. */
    public void deleteOnThreads(List<MemorySegment> tensors, boolean legacy, int threads) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment array = arena.allocate(ADDRESS, tensors.size());
            for (int i = 0; i < tensors.size(); i++) {
                array.setAtIndex(ADDRESS, i, tensors.get(i));
            }
            int rc = (int) deleteOnThreads.invokeExact(array, tensors.size(), flag(legacy), threads);
            if (rc != 0) {
                throw new IllegalStateException("peer_delete_on_threads returned " + rc);
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** C calls the deleter from one new pthread and joins it. */
    public void deleteOnNewThread(MemorySegment managed, boolean legacy) {
        try {
            int rc = (int) deleteOnNewThread.invokeExact(managed, flag(legacy));
            if (rc != 0) {
                throw new IllegalStateException("peer_delete_on_new_thread returned " + rc);
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Produces a tensor as described. */
    public Produced make(PeerTensor t) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment shape = arena.allocateFrom(JAVA_LONG, t.shape);
            MemorySegment strides = t.strides == null ? MemorySegment.NULL : arena.allocateFrom(JAVA_LONG, t.strides);
            MemorySegment id = arena.allocate(JAVA_INT);
            MemorySegment pointer = (MemorySegment) make.invokeExact(flag(t.legacy), t.major, t.minor, t.flags, t.ndim, shape,
                    flag(t.nullShape), strides, (byte) t.code, (byte) t.bits, (short) t.lanes, t.byteOffset, t.dataMode,
                    t.deviceType, flag(t.nullDeleter), id);
            if (pointer.address() == 0) {
                throw new IllegalStateException("the peer allocates data only for tensors reaching at most 2^28 elements; "
                        + "use dummyData() for larger shapes");
            }
            return new Produced(id.get(JAVA_INT, 0), pointer, t.legacy);
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Gives a produced tensor a deleter that does nothing (no system call, no shared counter), for
     * benchmarks that import one tensor again and again; its deleter calls are no longer counted.
     */
    public Produced quietDeleter(Produced produced) {
        try {
            useQuietDeleter.invokeExact(produced.pointer(), produced.legacy() ? 1 : 0);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
        return produced;
    }

    /** How often the deleter of a produced tensor ran. */
    public int deleterCalls(int id) {
        try {
            return (int) deleterCalls.invokeExact(id);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** The Linux thread id that last ran the deleter of a produced tensor, 0 if none. */
    public long deleterThread(int id) {
        try {
            return (long) deleterThread.invokeExact(id);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Deleter calls on all produced tensors since the last reset. */
    public long totalDeleterCalls() {
        try {
            return (long) totalDeleterCalls.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** The Linux thread id of the calling thread. */
    public long currentThread() {
        try {
            return (long) currentThread.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Frees every produced tensor; only when Java holds none of them. */
    public void reset() {
        try {
            reset.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Calls the deleter stored in {@code source} with {@code self} as its argument: a bogus call on purpose. */
    public void callDeleterOf(MemorySegment source, boolean legacy, MemorySegment self) {
        try {
            callDeleterOf.invokeExact(source, flag(legacy), self);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** C memcpy; either side may be a heap segment (a Java array). */
    public void memcpy(MemorySegment destination, MemorySegment source, long bytes) {
        try {
            memcpy.invokeExact(destination, source, bytes);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** C gather of a strided float32 matrix into a compact destination (strides in elements). */
    public void gatherF32(MemorySegment destination, MemorySegment source, long rows, long cols, long rowStride, long colStride) {
        try {
            gatherF32.invokeExact(destination, source, rows, cols, rowStride, colStride);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Starts calling the deleter on a new pthread and returns at once; {@link #join} waits for it. */
    public long deleteAsync(MemorySegment managed, boolean legacy) {
        try {
            long thread = (long) deleteAsync.invokeExact(managed, flag(legacy));
            if (thread == 0) {
                throw new IllegalStateException("pthread_create failed");
            }
            return thread;
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** Waits for a pthread started by {@link #deleteAsync}. */
    public void join(long thread) {
        try {
            int rc = (int) join.invokeExact(thread);
            if (rc != 0) {
                throw new IllegalStateException("pthread_join returned " + rc);
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /**
     * {@code int peer_make_result(int rows, int cols, DLManagedTensorVersioned** out)}: a C API that
     * returns a new tensor through an out-parameter, as cuVS does.
     */
    public int makeResult(int rows, int cols, MemorySegment out) {
        try {
            return (int) makeResult.invokeExact(rows, cols, out);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** A C consumer: reads the tensor's metadata and calls its deleter. */
    public long consume(MemorySegment managed, boolean legacy) {
        try {
            return (long) consume.invokeExact(managed, flag(legacy));
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** C calls {@code void fn(void)} n times on the calling thread. */
    public void callN(MemorySegment function, long n) {
        try {
            callN.invokeExact(function, n);
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** C calls {@code void fn(void)} n times on a new pthread, and joins it. */
    public void callNOnNewThread(MemorySegment function, long n) {
        try {
            int rc = (int) callNOnNewThread.invokeExact(function, n);
            if (rc != 0) {
                throw new IllegalStateException("peer_call_n_on_new_thread returned " + rc);
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }
}
