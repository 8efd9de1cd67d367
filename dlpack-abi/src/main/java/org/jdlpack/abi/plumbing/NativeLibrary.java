package org.jdlpack.abi.plumbing;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * A native library a module calls (libOpenCL, libcudart, libpython), opened once, and the
 * downcalls bound from it.
 *
 * <p>The call layers of both device modules load and bind the same way, so the policy lives here
 * once: the first candidate the dynamic loader opens wins, and a library or function that is
 * missing fails at the call, with a message naming it, instead of at class initialisation, so
 * that the module still loads and can say what is missing.
 *
 * <p>Immutable and safe from any thread.
 *
 * @since 0.1
 */
@SuppressWarnings("restricted")
public final class NativeLibrary {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final int RTLD_NOW = 2;
    /** Linux and macOS spell it differently: 0x100 on Linux, 0x8 on macOS. */
    private static final int RTLD_GLOBAL = System.getProperty("os.name", "").startsWith("Mac") ? 0x8 : 0x100;

    /** Null when no candidate opened. */
    private final SymbolLookup lookup;
    private final String name;
    private final String loadFailure;
    private final Function<String, ? extends RuntimeException> exception;

    private NativeLibrary(SymbolLookup lookup, String name, String loadFailure,
                          Function<String, ? extends RuntimeException> exception) {
        this.lookup = lookup;
        this.name = name;
        this.loadFailure = loadFailure;
        this.exception = exception;
    }

    /**
     * Opens the first of {@code candidates} that the dynamic loader opens, for the lifetime of the
     * JVM.
     *
     * @param owner       the class that calls the library: its module is the one native-access
     *                    messages name
     * @param candidates  sonames or paths, most preferred first
     * @param loadFailure the message when none opens
     * @param exception   the module's exception for a message
     * @return the library, opened or not
     * @throws IllegalCallerException naming the flag to pass, when native access is denied
     */
    public static NativeLibrary load(Class<?> owner, List<String> candidates, String loadFailure,
                                     Function<String, ? extends RuntimeException> exception) {
        boolean disabled = NativeAccess.disabled(owner);
        for (String candidate : candidates) {
            try {
                NativeLibrary library = new NativeLibrary(SymbolLookup.libraryLookup(candidate, Arena.global()), candidate,
                        null, exception);
                NativeAccess.warnIfWasDisabled(owner, disabled);
                return library;
            } catch (IllegalArgumentException notThere) {
                // try the next
            } catch (IllegalCallerException e) {
                throw NativeAccess.denied(owner, e);
            }
        }
        NativeAccess.warnIfWasDisabled(owner, disabled); // the lookups were allowed, only the library is missing
        return new NativeLibrary(null, null, loadFailure, exception);
    }

    /**
     * Opens a library with its symbols global ({@code dlopen(RTLD_NOW | RTLD_GLOBAL)}), so that
     * libraries it loads later resolve against it (CPython's extension modules, such as NumPy,
     * against libpython), then binds from it.
     *
     * @param owner       the class that calls the library: its module is the one native-access
     *                    messages name
     * @param library     the library's path
     * @param exception   the module's exception for a message
     * @return the library
     * @throws IllegalCallerException naming the flag to pass, when native access is denied
     * @throws RuntimeException       the module's exception, if the library does not open
     */
    public static NativeLibrary openGlobally(Class<?> owner, Path library,
                                             Function<String, ? extends RuntimeException> exception) {
        boolean disabled = NativeAccess.disabled(owner);
        try (Arena arena = Arena.ofConfined()) {
            MethodHandle dlopen = LINKER.downcallHandle(LINKER.defaultLookup().find("dlopen").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_INT));
            MemorySegment handle = (MemorySegment) dlopen.invokeExact(
                    arena.allocateFrom(library.toString()), RTLD_NOW | RTLD_GLOBAL);
            if (handle.address() == 0) {
                throw exception.apply("dlopen(" + library + ", RTLD_NOW | RTLD_GLOBAL) failed");
            }
            NativeLibrary opened = new NativeLibrary(SymbolLookup.libraryLookup(library, Arena.global()), library.toString(),
                    null, exception);
            NativeAccess.warnIfWasDisabled(owner, disabled);
            return opened;
        } catch (IllegalCallerException e) {
            throw NativeAccess.denied(owner, e);
        } catch (IllegalArgumentException e) {
            throw exception.apply(library + " does not open: " + e.getMessage());
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * The address of a symbol (a function or a variable such as {@code _Py_NoneStruct}).
     *
     * @param symbol its name
     * @return the address, zero-length
     * @throws RuntimeException the module's exception, naming the symbol, if the library lacks it or did not open
     */
    public MemorySegment symbol(String symbol) {
        require();
        return lookup.find(symbol).orElseThrow(() -> exception.apply(name + " lacks " + symbol));
    }

    /** {@return the candidate that opened, or empty when none did} */
    public Optional<String> name() {
        return Optional.ofNullable(name);
    }

    /** {@return why no candidate opened, or null when one did} */
    public String loadFailure() {
        return loadFailure;
    }

    /**
     * Throws the module's exception with {@link #loadFailure()} unless the library opened.
     */
    public void require() {
        if (lookup == null) {
            throw exception.apply(loadFailure);
        }
    }

    /**
     * The downcall for {@code symbol}; when the library or the symbol is missing, a stand-in that
     * throws the module's exception, with {@link #loadFailure()} or {@code missing}, at each call.
     *
     * @param symbol     the function's name
     * @param descriptor its C signature
     * @param missing    the message when the library lacks the function
     * @return the handle
     */
    public MethodHandle bind(String symbol, FunctionDescriptor descriptor, String missing) {
        if (lookup == null) {
            return Downcalls.failing(descriptor.toMethodType(), () -> exception.apply(loadFailure));
        }
        return lookup.find(symbol).map(address -> LINKER.downcallHandle(address, descriptor))
                .orElseGet(() -> Downcalls.failing(descriptor.toMethodType(), () -> exception.apply(missing)));
    }
}
