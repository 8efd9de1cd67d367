package org.jdlpack.onnxruntime;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.NativeLibrary;

/**
 * ONNX Runtime's C API, the one native-call layer of this module: {@code OrtGetApiBase()} gives
 * the {@code OrtApiBase}, whose {@code GetApi(ORT_API_VERSION)} gives the {@code OrtApi} struct, a
 * table of function pointers; each function used here is read from that table at its index (the
 * struct only ever grows at its end, so the index of a function never changes) and bound once, with
 * the one {@code invokeExact} of each in a typed method below.
 *
 * <p>Every C API function that can fail returns an {@code OrtStatus*} (NULL: success) and never
 * throws; {@link #check} turns a status into an {@link OrtStatusException} naming the call, with
 * ONNX Runtime's code and message, and releases the status. Pointers travel as {@code long}
 * (64-bit platforms only), so that a call allocates no {@code MemorySegment}.
 *
 * <p>The library is the one ONNX Runtime Java loaded ({@link OrtLibraryFinder}). Everything is bound
 * when the class initializes; what is missing is recorded, never thrown from the initializer, and
 * every call then throws it ({@link #require()}). Stateless after that and safe from any thread;
 * the counters are for tests, which check that each object is released exactly once.
 */
@SuppressWarnings("restricted")
final class OrtApi {

    /** {@code ORT_API_VERSION} of the onnxruntime_c_api.h this layer is written against: ONNX Runtime 1.23. */
    static final int API_VERSION = 23;

    // OrtErrorCode / OrtAllocatorType / OrtMemType / OrtLoggingLevel values used here.
    static final int ORT_WARNING = 2;
    static final int ORT_DEVICE_ALLOCATOR = 0;
    static final int ORT_MEM_TYPE_DEFAULT = 0;

    /** The OrtApi's functions used here, by their index in the struct (a fact of the header, append-only). */
    private static final int GET_ERROR_CODE = 1;
    private static final int GET_ERROR_MESSAGE = 2;
    private static final int CREATE_ENV = 3;
    private static final int CREATE_SESSION = 7;
    private static final int CREATE_SESSION_FROM_ARRAY = 8;
    private static final int RUN = 9;
    private static final int CREATE_SESSION_OPTIONS = 10;
    private static final int SET_INTRA_OP_NUM_THREADS = 24;
    private static final int SESSION_GET_INPUT_COUNT = 30;
    private static final int SESSION_GET_OUTPUT_COUNT = 31;
    private static final int SESSION_GET_INPUT_NAME = 36;
    private static final int SESSION_GET_OUTPUT_NAME = 37;
    private static final int CREATE_TENSOR_WITH_DATA_AS_ORT_VALUE = 49;
    private static final int GET_TENSOR_MUTABLE_DATA = 51;
    private static final int GET_TENSOR_ELEMENT_TYPE = 60;
    private static final int GET_DIMENSIONS_COUNT = 61;
    private static final int GET_DIMENSIONS = 62;
    private static final int GET_TENSOR_TYPE_AND_SHAPE = 65;
    private static final int CREATE_CPU_MEMORY_INFO = 69;
    private static final int ALLOCATOR_FREE = 76;
    private static final int GET_ALLOCATOR_WITH_DEFAULT_OPTIONS = 78;
    private static final int RELEASE_STATUS = 93;
    private static final int RELEASE_MEMORY_INFO = 94;
    private static final int RELEASE_SESSION = 95;
    private static final int RELEASE_VALUE = 96;
    private static final int RELEASE_TENSOR_TYPE_AND_SHAPE_INFO = 99;
    private static final int RELEASE_SESSION_OPTIONS = 100;
    private static final int GET_AVAILABLE_PROVIDERS = 125;
    private static final int RELEASE_AVAILABLE_PROVIDERS = 126;
    private static final int RUN_WITH_BINDING = 133;
    private static final int CREATE_IO_BINDING = 134;
    private static final int RELEASE_IO_BINDING = 135;
    private static final int BIND_INPUT = 136;
    private static final int BIND_OUTPUT = 137;
    /** The last index bound here: the table is read up to it. */
    private static final int LAST_USED = BIND_OUTPUT;

    private static final FunctionDescriptor STATUS_1 = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor STATUS_2 = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor STATUS_3 = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor STATUS_4 = FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor RELEASE = FunctionDescriptor.ofVoid(JAVA_LONG);

    /** The library's path, its version string ({@code GetVersionString}), and why it cannot be used (null when it can). */
    record Bound(String library, String version, String failure, MemorySegment api) {
    }

    static final Bound BOUND = bind();

    private static final MethodHandle GET_ERROR_CODE_H = function(GET_ERROR_CODE, FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
    private static final MethodHandle GET_ERROR_MESSAGE_H = function(GET_ERROR_MESSAGE, STATUS_1);
    private static final MethodHandle CREATE_ENV_H = function(CREATE_ENV, FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle CREATE_SESSION_H = function(CREATE_SESSION, STATUS_4);
    private static final MethodHandle CREATE_SESSION_FROM_ARRAY_H = function(CREATE_SESSION_FROM_ARRAY,
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle RUN_H = function(RUN, FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle CREATE_SESSION_OPTIONS_H = function(CREATE_SESSION_OPTIONS, STATUS_1);
    private static final MethodHandle SET_INTRA_OP_NUM_THREADS_H = function(SET_INTRA_OP_NUM_THREADS,
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT));
    private static final MethodHandle SESSION_GET_INPUT_COUNT_H = function(SESSION_GET_INPUT_COUNT, STATUS_2);
    private static final MethodHandle SESSION_GET_OUTPUT_COUNT_H = function(SESSION_GET_OUTPUT_COUNT, STATUS_2);
    private static final MethodHandle SESSION_GET_INPUT_NAME_H = function(SESSION_GET_INPUT_NAME, STATUS_4);
    private static final MethodHandle SESSION_GET_OUTPUT_NAME_H = function(SESSION_GET_OUTPUT_NAME, STATUS_4);
    private static final MethodHandle CREATE_TENSOR_WITH_DATA_H = function(CREATE_TENSOR_WITH_DATA_AS_ORT_VALUE,
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG));
    private static final MethodHandle GET_TENSOR_MUTABLE_DATA_H = function(GET_TENSOR_MUTABLE_DATA, STATUS_2);
    private static final MethodHandle GET_TENSOR_ELEMENT_TYPE_H = function(GET_TENSOR_ELEMENT_TYPE, STATUS_2);
    private static final MethodHandle GET_DIMENSIONS_COUNT_H = function(GET_DIMENSIONS_COUNT, STATUS_2);
    private static final MethodHandle GET_DIMENSIONS_H = function(GET_DIMENSIONS, STATUS_3);
    private static final MethodHandle GET_TENSOR_TYPE_AND_SHAPE_H = function(GET_TENSOR_TYPE_AND_SHAPE, STATUS_2);
    private static final MethodHandle CREATE_CPU_MEMORY_INFO_H = function(CREATE_CPU_MEMORY_INFO,
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle ALLOCATOR_FREE_H = function(ALLOCATOR_FREE, STATUS_2);
    private static final MethodHandle GET_ALLOCATOR_WITH_DEFAULT_OPTIONS_H = function(GET_ALLOCATOR_WITH_DEFAULT_OPTIONS, STATUS_1);
    private static final MethodHandle RELEASE_STATUS_H = function(RELEASE_STATUS, RELEASE);
    private static final MethodHandle RELEASE_MEMORY_INFO_H = function(RELEASE_MEMORY_INFO, RELEASE);
    private static final MethodHandle RELEASE_SESSION_H = function(RELEASE_SESSION, RELEASE);
    private static final MethodHandle RELEASE_VALUE_H = function(RELEASE_VALUE, RELEASE);
    private static final MethodHandle RELEASE_TENSOR_TYPE_AND_SHAPE_INFO_H = function(RELEASE_TENSOR_TYPE_AND_SHAPE_INFO, RELEASE);
    private static final MethodHandle RELEASE_SESSION_OPTIONS_H = function(RELEASE_SESSION_OPTIONS, RELEASE);
    private static final MethodHandle GET_AVAILABLE_PROVIDERS_H = function(GET_AVAILABLE_PROVIDERS, STATUS_2);
    private static final MethodHandle RELEASE_AVAILABLE_PROVIDERS_H = function(RELEASE_AVAILABLE_PROVIDERS,
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT));
    private static final MethodHandle RUN_WITH_BINDING_H = function(RUN_WITH_BINDING, STATUS_3);
    private static final MethodHandle CREATE_IO_BINDING_H = function(CREATE_IO_BINDING, STATUS_2);
    private static final MethodHandle RELEASE_IO_BINDING_H = function(RELEASE_IO_BINDING, RELEASE);
    private static final MethodHandle BIND_INPUT_H = function(BIND_INPUT, STATUS_3);
    private static final MethodHandle BIND_OUTPUT_H = function(BIND_OUTPUT, STATUS_3);

    /** Live objects made through this layer, per kind, and statuses released: for the tests' exactly-once checks. */
    static final AtomicLong LIVE_VALUES = new AtomicLong();
    static final AtomicLong LIVE_SESSIONS = new AtomicLong();
    static final AtomicLong LIVE_MEMORY_INFOS = new AtomicLong();
    static final AtomicLong LIVE_SESSION_OPTIONS = new AtomicLong();
    static final AtomicLong LIVE_TYPE_AND_SHAPE_INFOS = new AtomicLong();
    static final AtomicLong LIVE_IO_BINDINGS = new AtomicLong();
    /** Every {@code ReleaseValue} call, so that a test can count one release per value. */
    static final AtomicLong VALUES_RELEASED = new AtomicLong();
    static final AtomicLong STATUSES_RELEASED = new AtomicLong();

    private OrtApi() {
    }

    private static Bound bind() {
        OrtLibraryFinder.Found found = OrtLibraryFinder.find();
        if (found.failure() != null) {
            return new Bound(null, null, found.failure(), null);
        }
        NativeLibrary library = NativeLibrary.load(OrtApi.class, List.of(found.library()),
                found.library() + " does not open", IllegalStateException::new);
        if (library.loadFailure() != null) {
            return new Bound(found.library(), null, library.loadFailure(), null);
        }
        Linker linker = Linker.nativeLinker();
        try {
            MethodHandle getApiBase = linker.downcallHandle(library.symbol("OrtGetApiBase"), FunctionDescriptor.of(ADDRESS));
            // OrtApiBase { const OrtApi* (*GetApi)(uint32_t); const char* (*GetVersionString)(void); }
            MemorySegment base = ((MemorySegment) getApiBase.invokeExact()).reinterpret(2 * ADDRESS.byteSize());
            MethodHandle getApi = linker.downcallHandle(base.get(ADDRESS, 0), FunctionDescriptor.of(ADDRESS, JAVA_INT));
            MethodHandle getVersion = linker.downcallHandle(base.get(ADDRESS, ADDRESS.byteSize()), FunctionDescriptor.of(ADDRESS));
            String version = ((MemorySegment) getVersion.invokeExact()).reinterpret(256).getString(0);
            MemorySegment api = (MemorySegment) getApi.invokeExact(API_VERSION);
            if (api.address() == 0) {
                return new Bound(found.library(), version, "the ONNX Runtime at " + found.library() + " is version " + version
                        + ", older than this layer needs: its GetApi(" + API_VERSION + ") returned NULL (ORT_API_VERSION "
                        + API_VERSION + " is ONNX Runtime 1.23); use ONNX Runtime 1.23 or later", null);
            }
            return new Bound(found.library(), version, null, api.reinterpret((LAST_USED + 1) * ADDRESS.byteSize()));
        } catch (Throwable t) {
            return new Bound(found.library(), null, "binding ONNX Runtime's C API from " + found.library() + " failed: " + t, null);
        }
    }

    private static MethodHandle function(int index, FunctionDescriptor descriptor) {
        if (BOUND.failure() != null) {
            String failure = BOUND.failure();
            return Downcalls.failing(descriptor.toMethodType(), () -> new IllegalStateException(failure));
        }
        MemorySegment pointer = BOUND.api().get(ADDRESS, index * ADDRESS.byteSize());
        if (pointer.address() == 0) {
            String failure = "the OrtApi of " + BOUND.library() + " has no function at index " + index;
            return Downcalls.failing(descriptor.toMethodType(), () -> new IllegalStateException(failure));
        }
        return Linker.nativeLinker().downcallHandle(pointer, descriptor);
    }

    /** Throws {@link IllegalStateException} with what is missing, unless the C API is bound. */
    static void require() {
        if (BOUND.failure() != null) {
            throw new IllegalStateException("ONNX Runtime's C API is unavailable: " + BOUND.failure());
        }
    }

    // ------------------------------------------------------------------ OrtStatus

    /**
     * Throws for a failed call: reads the code and message of {@code status} (non-NULL), releases
     * it, and throws an exception naming {@code call}. A NULL status returns at once.
     */
    static void check(long status, String call) {
        if (status != 0) {
            throw failure(status, call);
        }
    }

    private static OrtStatusException failure(long status, String call) {
        int code;
        String message;
        try {
            code = (int) GET_ERROR_CODE_H.invokeExact(status);
            message = cString((long) GET_ERROR_MESSAGE_H.invokeExact(status));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        } finally {
            releaseStatus(status);
        }
        return new OrtStatusException(call, code, message);
    }

    static void releaseStatus(long status) {
        try {
            RELEASE_STATUS_H.invokeExact(status);
            STATUSES_RELEASED.incrementAndGet();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return a NUL-terminated UTF-8 string ONNX Runtime owns, copied; "" for NULL} */
    static String cString(long address) {
        return address == 0 ? "" : MemorySegment.ofAddress(address).reinterpret(Integer.MAX_VALUE).getString(0);
    }

    // ------------------------------------------------------------------ calls (out: a caller's slot of 8 bytes)

    /** {@return a new reference on the process's one OrtEnv (ONNX Runtime Java's, when it made one)} */
    static long createEnv(MemorySegment logId, MemorySegment out) {
        try {
            check((long) CREATE_ENV_H.invokeExact(ORT_WARNING, logId.address(), out.address()), "CreateEnv");
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static long createSessionOptions(MemorySegment out) {
        try {
            check((long) CREATE_SESSION_OPTIONS_H.invokeExact(out.address()), "CreateSessionOptions");
            LIVE_SESSION_OPTIONS.incrementAndGet();
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void setIntraOpNumThreads(long options, int threads) {
        try {
            check((long) SET_INTRA_OP_NUM_THREADS_H.invokeExact(options, threads), "SetIntraOpNumThreads");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void releaseSessionOptions(long options) {
        try {
            RELEASE_SESSION_OPTIONS_H.invokeExact(options);
            LIVE_SESSION_OPTIONS.decrementAndGet();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** @param path a NUL-terminated path (ORTCHAR_T is char on Linux and macOS) */
    static long createSession(long env, MemorySegment path, long options, MemorySegment out) {
        try {
            check((long) CREATE_SESSION_H.invokeExact(env, path.address(), options, out.address()), "CreateSession");
            LIVE_SESSIONS.incrementAndGet();
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static long createSessionFromArray(long env, MemorySegment model, long options, MemorySegment out) {
        try {
            check((long) CREATE_SESSION_FROM_ARRAY_H.invokeExact(env, model.address(), model.byteSize(), options, out.address()),
                    "CreateSessionFromArray");
            LIVE_SESSIONS.incrementAndGet();
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void releaseSession(long session) {
        try {
            RELEASE_SESSION_H.invokeExact(session);
            LIVE_SESSIONS.decrementAndGet();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static long inputCount(long session, MemorySegment out) {
        try {
            check((long) SESSION_GET_INPUT_COUNT_H.invokeExact(session, out.address()), "SessionGetInputCount");
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static long outputCount(long session, MemorySegment out) {
        try {
            check((long) SESSION_GET_OUTPUT_COUNT_H.invokeExact(session, out.address()), "SessionGetOutputCount");
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@return input {@code index}'s name, copied; the allocator's string is freed} */
    static String inputName(long session, long index, MemorySegment out) {
        try {
            long allocator = defaultAllocator(out);
            check((long) SESSION_GET_INPUT_NAME_H.invokeExact(session, index, allocator, out.address()), "SessionGetInputName");
            return takeString(allocator, out.get(JAVA_LONG, 0));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static String outputName(long session, long index, MemorySegment out) {
        try {
            long allocator = defaultAllocator(out);
            check((long) SESSION_GET_OUTPUT_NAME_H.invokeExact(session, index, allocator, out.address()), "SessionGetOutputName");
            return takeString(allocator, out.get(JAVA_LONG, 0));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    private static long defaultAllocator(MemorySegment out) throws Throwable {
        check((long) GET_ALLOCATOR_WITH_DEFAULT_OPTIONS_H.invokeExact(out.address()), "GetAllocatorWithDefaultOptions");
        return out.get(JAVA_LONG, 0); // not to be freed: the same allocator every time
    }

    private static String takeString(long allocator, long string) throws Throwable {
        try {
            return cString(string);
        } finally {
            check((long) ALLOCATOR_FREE_H.invokeExact(allocator, string), "AllocatorFree");
        }
    }

    static long createCpuMemoryInfo(MemorySegment out) {
        try {
            check((long) CREATE_CPU_MEMORY_INFO_H.invokeExact(ORT_DEVICE_ALLOCATOR, ORT_MEM_TYPE_DEFAULT, out.address()),
                    "CreateCpuMemoryInfo");
            LIVE_MEMORY_INFOS.incrementAndGet();
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void releaseMemoryInfo(long info) {
        try {
            RELEASE_MEMORY_INFO_H.invokeExact(info);
            LIVE_MEMORY_INFOS.decrementAndGet();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * {@code CreateTensorWithDataAsOrtValue}: an OrtValue over memory the caller keeps valid until
     * the value is released (ONNX Runtime never frees it).
     *
     * @param shape {@code rank} {@code int64_t}s
     */
    static long createTensorWithData(long memoryInfo, long data, long bytes, MemorySegment shape, int rank, int elementType,
                                     MemorySegment out) {
        try {
            check((long) CREATE_TENSOR_WITH_DATA_H.invokeExact(memoryInfo, data, bytes, shape.address(), (long) rank, elementType,
                    out.address()), "CreateTensorWithDataAsOrtValue");
            LIVE_VALUES.incrementAndGet();
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static long tensorMutableData(long value, MemorySegment out) {
        try {
            check((long) GET_TENSOR_MUTABLE_DATA_H.invokeExact(value, out.address()), "GetTensorMutableData");
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void releaseValue(long value) {
        try {
            RELEASE_VALUE_H.invokeExact(value);
            LIVE_VALUES.decrementAndGet();
            VALUES_RELEASED.incrementAndGet();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** A value's element type and shape, through a type-and-shape info made and released here. */
    record TypeAndShape(int elementType, long[] shape) {
    }

    static TypeAndShape typeAndShape(long value, MemorySegment out) {
        long info;
        try {
            check((long) GET_TENSOR_TYPE_AND_SHAPE_H.invokeExact(value, out.address()), "GetTensorTypeAndShape");
            info = out.get(JAVA_LONG, 0);
            LIVE_TYPE_AND_SHAPE_INFOS.incrementAndGet();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
        try (Arena arena = Arena.ofConfined()) {
            check((long) GET_TENSOR_ELEMENT_TYPE_H.invokeExact(info, out.address()), "GetTensorElementType");
            int type = out.get(JAVA_INT, 0);
            check((long) GET_DIMENSIONS_COUNT_H.invokeExact(info, out.address()), "GetDimensionsCount");
            long rank = out.get(JAVA_LONG, 0);
            MemorySegment dims = arena.allocate(JAVA_LONG, Math.max(rank, 1));
            check((long) GET_DIMENSIONS_H.invokeExact(info, dims.address(), rank), "GetDimensions");
            return new TypeAndShape(type, dims.asSlice(0, rank * 8).toArray(JAVA_LONG));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        } finally {
            try {
                RELEASE_TENSOR_TYPE_AND_SHAPE_INFO_H.invokeExact(info);
                LIVE_TYPE_AND_SHAPE_INFOS.decrementAndGet();
            } catch (Throwable t) {
                throw Downcalls.rethrow(t);
            }
        }
    }

    /**
     * {@code Run}: all arrays are native and hold {@code inputCount} or {@code outputCount}
     * pointers; a non-NULL output is written in place, a NULL one is set to a value ONNX Runtime
     * allocated.
     */
    static void run(long session, long inputNames, long inputs, long inputCount, long outputNames, long outputCount,
                    long outputs) {
        long status;
        try {
            status = (long) RUN_H.invokeExact(session, 0L, inputNames, inputs, inputCount, outputNames, outputCount, outputs);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
        check(status, "Run");
    }

    /**
     * Takes the value ONNX Runtime wrote into slot {@code index} of a run's output array (one it
     * allocated, for a slot that was NULL), zeroes the slot for the next run, and counts the value
     * as live: the caller releases it. {@return the value, or 0 where the slot holds none}
     */
    static long takeValue(MemorySegment outputs, int index) {
        long value = outputs.getAtIndex(JAVA_LONG, index);
        if (value != 0) {
            outputs.setAtIndex(JAVA_LONG, index, 0);
            LIVE_VALUES.incrementAndGet();
        }
        return value;
    }

    // ------------------------------------------------------------------ execution providers

    /** {@return the execution providers this build of ONNX Runtime has, such as {@code CPUExecutionProvider}} */
    static List<String> availableProviders() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment names = arena.allocate(JAVA_LONG);
            MemorySegment count = arena.allocate(JAVA_INT);
            check((long) GET_AVAILABLE_PROVIDERS_H.invokeExact(names.address(), count.address()), "GetAvailableProviders");
            long array = names.get(JAVA_LONG, 0);
            int n = count.get(JAVA_INT, 0);
            try {
                List<String> providers = new ArrayList<>(n);
                MemorySegment pointers = MemorySegment.ofAddress(array).reinterpret((long) n * ADDRESS.byteSize());
                for (int i = 0; i < n; i++) {
                    providers.add(cString(pointers.getAtIndex(JAVA_LONG, i)));
                }
                return List.copyOf(providers);
            } finally {
                check((long) RELEASE_AVAILABLE_PROVIDERS_H.invokeExact(array, n), "ReleaseAvailableProviders");
            }
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    // ------------------------------------------------------------------ OrtIoBinding

    static long createIoBinding(long session, MemorySegment out) {
        try {
            check((long) CREATE_IO_BINDING_H.invokeExact(session, out.address()), "CreateIoBinding");
            LIVE_IO_BINDINGS.incrementAndGet();
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    static void releaseIoBinding(long binding) {
        try {
            RELEASE_IO_BINDING_H.invokeExact(binding);
            LIVE_IO_BINDINGS.decrementAndGet();
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code BindInput}: the binding keeps its own reference on the value's tensor, over the caller's memory. */
    static void bindInput(long binding, MemorySegment name, long value) {
        try {
            check((long) BIND_INPUT_H.invokeExact(binding, name.address(), value), "BindInput");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code BindOutput}: each run of the binding writes into the value's memory in place. */
    static void bindOutput(long binding, MemorySegment name, long value) {
        try {
            check((long) BIND_OUTPUT_H.invokeExact(binding, name.address(), value), "BindOutput");
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** {@code RunWithBinding}, with the default run options. */
    static void runWithBinding(long session, long binding) {
        long status;
        try {
            status = (long) RUN_WITH_BINDING_H.invokeExact(session, 0L, binding);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
        check(status, "RunWithBinding");
    }
}
