package org.jdlpack.onnxruntime;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.cpu.OwnedHostTensor;
import org.jdlpack.cpu.internal.HostMemory;

/**
 * {@code OrtValue}s both ways, for the C route: a value over memory the caller keeps valid
 * ({@code CreateTensorWithDataAsOrtValue}: an input, or an output ONNX Runtime writes in place),
 * and an {@link OwnedHostTensor} over a value ONNX Runtime allocated (an output whose shape the
 * model decides), with no copy, whose release releases the value. Also the process's one
 * {@code OrtEnv} and CPU {@code OrtMemoryInfo}. Stateless; any thread.
 */
final class OrtValues {

    private OrtValues() {
    }

    /** {@return the process's one {@code OrtEnv}, made (or shared with ONNX Runtime Java) at the first call; never released} */
    static long env() {
        return Env.ENV;
    }

    /** The process's one {@code OrtEnv}, made when the first session opens. */
    private static final class Env {
        static final long ENV;

        static {
            try (Arena arena = Arena.ofConfined()) {
                ENV = OrtApi.createEnv(arena.allocateFrom("jdlpack"), arena.allocate(JAVA_LONG));
            }
        }
    }

    /** One CPU {@code OrtMemoryInfo} for every value (each copies it): made once, never released. */
    private static final class CpuMemory {
        static final long INFO;

        static {
            try (Arena arena = Arena.ofConfined()) {
                INFO = OrtApi.createCpuMemoryInfo(arena.allocate(JAVA_LONG));
            }
        }
    }

    /**
     * Each thread's native scratch for the calls here: the out slot and the dims, so that making
     * a value opens no arena. Used only between two statements of one thread, never across a call out.
     */
    private static final class Scratch {
        static final int RANKS = 31;
        static final ThreadLocal<MemorySegment> SEGMENT = ThreadLocal.withInitial(
                () -> Arena.ofAuto().allocate(JAVA_LONG, RANKS + 1));
    }

    /**
     * {@return a new value over {@code data} (compact, element 0 first), which ONNX Runtime never
     * frees: the caller keeps the memory valid until the value is released}
     *
     * @param data  the elements
     * @param shape the extents
     * @param type  the {@code ONNXTensorElementDataType}
     */
    static long over(MemorySegment data, long[] shape, int type) {
        if (shape.length < Scratch.RANKS) {
            MemorySegment scratch = Scratch.SEGMENT.get(); // [0]: the out slot, [1..]: the dims
            MemorySegment.copy(shape, 0, scratch, JAVA_LONG, 8, shape.length);
            return OrtApi.createTensorWithData(CpuMemory.INFO, data.address(), data.byteSize(), scratch.asSlice(8), shape.length,
                    type, scratch);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment dims = arena.allocate(JAVA_LONG, shape.length);
            MemorySegment.copy(shape, 0, dims, JAVA_LONG, 0, shape.length);
            return OrtApi.createTensorWithData(CpuMemory.INFO, data.address(), data.byteSize(), dims, shape.length, type,
                    arena.allocate(JAVA_LONG));
        }
    }

    /**
     * Takes a value ONNX Runtime allocated and hands it on as a tensor over the value's own memory
     * (no copy) that owns it: the value is released exactly once, when the tensor is closed and
     * every export and retain of it is gone, on whichever thread that is (a consumer's deleter on
     * a native thread, or the safety net for a tensor forgotten). A value that is no tensor of a
     * type DLPack has is released here and refused.
     *
     * @param value the value, this call's to release
     * @param what  names the value in a refusal (the output's name)
     * @return the tensor
     * @throws IllegalArgumentException if the value's element type has no DLPack type
     * @throws OrtStatusException       if the value is no tensor (a sequence, a map)
     */
    static OwnedHostTensor exported(long value, Supplier<String> what) {
        return exported(value, what, HostMemory::owning);
    }

    /**
     * {@link #exported(long, Supplier)} with the tensor made by {@code maker}: the test's way to
     * throw after the tensor's owner exists, which no real part does today.
     */
    @SuppressWarnings("restricted") // the value's own memory, its size from its type and shape; freed only by the release
    static OwnedHostTensor exported(long value, Supplier<String> what, HostMemory.Owning maker) {
        // One release for the tensor and for the cleanup below: after a throw past the making of
        // the tensor's owner (an owner closed, or left open in the ledger for the safety net),
        // the value must not be released a second time.
        Once release = null;
        try {
            release = new Once(() -> OrtApi.releaseValue(value));
            MemorySegment scratch = Scratch.SEGMENT.get();
            OrtApi.TypeAndShape typeAndShape = OrtApi.typeAndShape(value, scratch);
            DLDataType dtype = OnnxElementTypes.dtype(typeAndShape.elementType());
            if (dtype == null) {
                throw new IllegalArgumentException(what.get() + " is a tensor of ONNX type "
                        + OnnxElementTypes.name(typeAndShape.elementType()) + ", which DLPack has no type for (strings, complex "
                        + "and 4-bit types); cast it in the model to a type DLPack has");
            }
            long[] shape = typeAndShape.shape();
            long bytes = TensorLayout.of(dtype, shape).extent().byteSize();
            long address = OrtApi.tensorMutableData(value, scratch);
            if (address == 0 && bytes != 0) {
                throw new IllegalStateException(what.get() + ": ONNX Runtime gave no data for " + bytes + " bytes");
            }
            MemorySegment data = MemorySegment.ofAddress(address).reinterpret(bytes);
            return maker.over(data, dtype, shape, release);
        } catch (RuntimeException | Error e) {
            if (release == null) {
                OrtApi.releaseValue(value);
            } else {
                release.runAfter(e); // does nothing where the tensor's owner released it already
            }
            throw e;
        }
    }
}
