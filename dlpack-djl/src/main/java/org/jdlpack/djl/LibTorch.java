package org.jdlpack.djl;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.SymbolTable;
import org.jdlpack.libtorch.AotiShim;
import org.jdlpack.libtorch.TorchDTypes;

/**
 * How jdlpack reaches the libtorch DJL's PyTorch engine loaded (never a second copy): the functions
 * this adapter calls, and one typed method per function holding its only {@code invokeExact}.
 *
 * <p>DJL's native handle of a {@code PtNDArray} is the address of a heap {@code torch::Tensor}
 * (that is, an {@code at::Tensor}), made with {@code new} by DJL's JNI library and deleted with
 * {@code delete} when the NDArray closes: exactly what the AOTInductor C shim calls an
 * {@code AtenTensorHandle}. So the shim's C functions ({@code aoti_torch_*}, which catch every C++
 * exception and return an error code) read DJL's tensors, make the export's own handle and delete
 * it, and make the heap tensor a new NDArray takes over. One mangled C++ function,
 * {@code at::fromDLPack(DLManagedTensor*)}, for which libtorch 2.7.1 has no C entry (and no
 * {@code fromDLPackVersioned} at all): it throws on input it refuses, which nothing catches, so
 * {@link DLPackInputs} checks every field first. Under the Itanium C++ ABI the returned
 * {@code at::Tensor} (it has a destructor) is constructed in a slot the caller passes first. The
 * one-argument overload is the one that calls the struct's deleter when the storage dies: in
 * 2.7.1 the overload taking a {@code std::function} uses that function alone, and an empty one
 * makes a tensor that never frees (the 2.10 adapter's empty-function call would leak here).
 *
 * <p>The shim's calls are {@link AotiShim}'s (shared with the JavaCPP adapter, over the functions
 * bound here from DJL's libtorch); the one C++ call, whose signature is 2.7.1's own, is here.
 *
 * <p>Everything is bound when the class initializes, which {@link DjlDLPack#get()} triggers; what
 * is missing is recorded, never thrown from the initializer, and {@link #require()} throws it.
 * Stateless after that and safe from any thread.
 */
final class LibTorch {

    /** The libtorch this adapter is written against: DJL 0.36's PyTorch engine loads it. */
    static final String EXPECTED_VERSION = "2.7.1";
    /** {@code at::fromDLPack(DLManagedTensor*)}: the overload that makes the struct's own deleter torch's. */
    static final String FROM_DLPACK = "_ZN2at10fromDLPackEP15DLManagedTensor";
    /**
     * The types libtorch 2.7.1 converts: no float8 (its DLPack header predates their codes).
     * bfloat16 is tagged from torch's own code, so a DJL {@code BFLOAT16} array leaves as DLPack
     * (bfloat, 16, 1).
     */
    static final TorchDTypes DTYPES = TorchDTypes.NO_FLOAT8;
    /** 2.7.1's shim has no {@code aoti_torch_is_defined} nor {@code aoti_torch_get_layout}; DJL's arrays are strided. */
    private static final boolean READS_LAYOUT = false;

    /** Every function this adapter calls, with its C signature: all are checked before the first use. */
    private static final Map<String, FunctionDescriptor> REQUIRED = required();

    private static Map<String, FunctionDescriptor> required() {
        Map<String, FunctionDescriptor> functions = new LinkedHashMap<>(AotiShim.functions(DTYPES, READS_LAYOUT));
        functions.put(FROM_DLPACK, FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG));
        return functions;
    }

    /** Where the library was found, DJL's libtorch version, and why it cannot be used (null when it can). */
    record Found(Path library, String version, String failure) {
    }

    static final Found FOUND;
    private static final SymbolTable SYMBOLS;

    static {
        Found found = DjlLibTorch.find();
        SYMBOLS = found.failure() != null ? SymbolTable.unbound(REQUIRED, found.failure(), DjlUnavailableException::new)
                // dlopen of a mapped path: the same copy
                : SymbolTable.bind(LibTorch.class, List.of(found.library()), REQUIRED, missing -> "the libtorch "
                        + found.version() + " DJL loaded (" + found.library() + ") lacks " + missing + ": this adapter needs "
                        + "at::fromDLPack and the AOTInductor C shim of libtorch " + EXPECTED_VERSION + " (DJL 0.36's PyTorch "
                        + "engine); use that DJL release, or set PYTORCH_VERSION to a libtorch that exports these symbols",
                        DjlUnavailableException::new);
        FOUND = new Found(found.library(), found.version(), SYMBOLS.failure());
    }

    /** The shim's calls, over the functions bound from DJL's libtorch. */
    static final AotiShim SHIM = new AotiShim(SYMBOLS, READS_LAYOUT);
    private static final MethodHandle FROM = SYMBOLS.handle(FROM_DLPACK);

    private LibTorch() {
    }

    /** Throws {@link DjlUnavailableException} with what is missing, unless every entry point is there. */
    static void require() {
        if (FOUND.failure() != null) {
            throw new DjlUnavailableException(FOUND.failure());
        }
    }

    /**
     * {@code at::fromDLPack(src)}: constructs the result in {@code resultSlot}. Only for a legacy
     * struct {@link DLPackInputs} accepted: anything libtorch refuses ends the process.
     *
     * @param resultSlot  an {@code at::Tensor} holding no reference (an undefined one), overwritten
     */
    static void fromDLPack(long resultSlot, long managedTensor) {
        try {
            FROM.invokeExact(resultSlot, managedTensor);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
