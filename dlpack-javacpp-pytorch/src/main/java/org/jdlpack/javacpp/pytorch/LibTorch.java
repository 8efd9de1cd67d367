package org.jdlpack.javacpp.pytorch;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.bytedeco.javacpp.Loader;
import org.jdlpack.abi.plumbing.Downcalls;
import org.jdlpack.abi.plumbing.SymbolTable;
import org.jdlpack.libtorch.AotiShim;
import org.jdlpack.libtorch.TorchDTypes;

/**
 * How jdlpack reaches libtorch: the library JavaCPP loaded (never a second copy), the functions
 * this adapter calls, and one typed method per function holding its only {@code invokeExact}.
 *
 * <p>Two kinds of entry point. The AOTInductor C shim ({@code aoti_torch_*}): C functions that
 * catch every C++ exception and return an error code, used wherever they suffice (reading a
 * tensor, a new handle as an export's owner, deleting it). And two mangled C++ functions,
 * {@code at::fromDLPack} and {@code at::fromDLPackVersioned}, for which libtorch 2.10 has no C
 * entry: they throw on input they refuse, and nothing catches that, so {@link DLPackInputs}
 * checks every field before they are called. Under the Itanium C++ ABI an {@code at::Tensor}
 * returned by value (it has a destructor) is written to a slot the caller passes first, and the
 * {@code std::function<void(void*)>} argument, passed by value, is passed as the address of a
 * caller-owned object: an empty one (all 32 bytes zero in libstdc++ and libc++) asks libtorch to
 * call the struct's own deleter.
 *
 * <p>The shim's calls are {@link AotiShim}'s (shared with the DJL adapter, over the functions
 * bound here from JavaCPP's libtorch); the two C++ calls, whose signatures are 2.10's own, are here.
 *
 * <p>Everything is bound when the class initializes, which {@link TorchDLPack#get()} triggers;
 * what is missing is recorded, never thrown from the initializer, and {@link #require()} throws
 * it. Stateless after that and safe from any thread.
 */
final class LibTorch {

    /** The JavaCPP library name (the key in {@code Loader.getLoadedLibraries()}) of the library with the entry points. */
    private static final String TORCH_CPU = "torch_cpu";
    static final String FROM_DLPACK = "_ZN2at10fromDLPackEP15DLManagedTensorSt8functionIFvPvEE";
    static final String FROM_DLPACK_VERSIONED = "_ZN2at19fromDLPackVersionedEP24DLManagedTensorVersionedSt8functionIFvPvEE";
    /** The size of {@code std::function<void(void*)>} on LP64 (libstdc++ and libc++): two words of storage, a manager, an invoker. */
    static final long STD_FUNCTION_BYTES = 32;
    /** The types libtorch 2.10 converts, float8 included. */
    static final TorchDTypes DTYPES = TorchDTypes.WITH_FLOAT8;
    /** JavaCPP's tensors may be sparse or undefined: the export reads both (2.10's shim has the functions). */
    private static final boolean READS_LAYOUT = true;

    private static final FunctionDescriptor FROM_SIGNATURE = FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG, ADDRESS);

    /** Every function this adapter calls, with its C signature: all are checked before the first use. */
    private static final Map<String, FunctionDescriptor> REQUIRED = required();

    private static Map<String, FunctionDescriptor> required() {
        Map<String, FunctionDescriptor> functions = new LinkedHashMap<>(AotiShim.functions(DTYPES, READS_LAYOUT));
        functions.put(FROM_DLPACK, FROM_SIGNATURE);
        functions.put(FROM_DLPACK_VERSIONED, FROM_SIGNATURE);
        return functions;
    }

    /** Where the library was found, its presets' version, and why it cannot be used (null when it can). */
    record Found(Path library, String version, String failure) {
    }

    static final Found FOUND;
    private static final SymbolTable SYMBOLS;

    static {
        Found found = find();
        SYMBOLS = found.failure() != null ? SymbolTable.unbound(REQUIRED, found.failure(), TorchUnavailableException::new)
                // dlopen of a loaded path: the same copy
                : SymbolTable.bind(LibTorch.class, List.of(found.library()), REQUIRED, missing -> "libtorch from JavaCPP "
                        + "pytorch " + found.version() + " (" + found.library() + ") lacks " + missing + ": this adapter needs "
                        + "the DLPack entry points and the AOTInductor C shim of libtorch 2.10 (JavaCPP pytorch 2.10.0-1.5.13); "
                        + "use that version of the presets, or one whose libtorch exports these symbols",
                        TorchUnavailableException::new);
        FOUND = new Found(found.library(), found.version(), SYMBOLS.failure());
    }

    /** The shim's calls, over the functions bound from JavaCPP's libtorch. */
    static final AotiShim SHIM = new AotiShim(SYMBOLS, READS_LAYOUT);
    private static final MethodHandle FROM = SYMBOLS.handle(FROM_DLPACK);
    private static final MethodHandle FROM_VERSIONED = SYMBOLS.handle(FROM_DLPACK_VERSIONED);

    private static Found find() {
        String os = System.getProperty("os.name", "");
        if (os.startsWith("Windows")) {
            return new Found(null, null, "libtorch on Windows is built with the MSVC C++ ABI, whose names and calling "
                    + "conventions for at::fromDLPack differ from the Itanium ABI this adapter calls; it is refused there. "
                    + "Use torch.from_blob from JavaCPP, or run on Linux or macOS");
        }
        String version;
        String path;
        try {
            Loader.load(org.bytedeco.pytorch.global.torch.class); // what JavaCPP does on the first tensor: loaded once per process
            version = presetsVersion();
            path = Loader.getLoadedLibraries().get(TORCH_CPU);
        } catch (NoClassDefFoundError | UnsatisfiedLinkError e) {
            return new Found(null, null, "JavaCPP's pytorch presets did not load (" + e + "): add org.bytedeco:pytorch "
                    + "with the classifier of your platform (for example linux-x86_64), org.bytedeco:javacpp and "
                    + "org.bytedeco:openblas with the same classifier, at versions matching the presets");
        }
        if (path == null || !Files.exists(Path.of(path))) {
            return new Found(null, version, "JavaCPP loaded pytorch " + version + " but no " + TORCH_CPU
                    + " library is among its loaded libraries (" + Loader.getLoadedLibraries().keySet() + ")");
        }
        return new Found(Path.of(path), version, null);
    }

    private static String presetsVersion() {
        try {
            String version = Loader.getVersion("org.bytedeco", "pytorch");
            return version != null ? version : "(unknown version)";
        } catch (java.io.IOException e) {
            return "(unknown version: " + e.getMessage() + ")";
        }
    }

    private LibTorch() {
    }

    /** Throws {@link TorchUnavailableException} with what is missing, unless every entry point is there. */
    static void require() {
        if (FOUND.failure() != null) {
            throw new TorchUnavailableException(FOUND.failure());
        }
    }

    /**
     * {@code at::fromDLPack(src, {})} or {@code at::fromDLPackVersioned(src, {})}: constructs the
     * result in {@code resultSlot}. Only for a struct {@link DLPackInputs} accepted: anything
     * libtorch refuses ends the process.
     *
     * @param versioned   which struct {@code managedTensor} is
     * @param resultSlot  an {@code at::Tensor} holding no reference (an undefined one), overwritten
     * @param noDeleter   {@link #STD_FUNCTION_BYTES} zero bytes: an empty {@code std::function}
     */
    static void fromDLPack(boolean versioned, long resultSlot, long managedTensor, MemorySegment noDeleter) {
        try {
            if (versioned) {
                FROM_VERSIONED.invokeExact(resultSlot, managedTensor, noDeleter);
            } else {
                FROM.invokeExact(resultSlot, managedTensor, noDeleter);
            }
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
