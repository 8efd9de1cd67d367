package org.jdlpack.abi.plumbing;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The downcalls an adapter binds from library files that another runtime already loaded (the
 * libtorch of JavaCPP or DJL, TensorFlow Java's libraries): every function is looked up once, up
 * front, so that one message names all that is missing; and a function of a table that could not
 * be bound is a stand-in throwing the adapter's exception with that message, so that call layers
 * need no check of their own and a class initializer never throws.
 *
 * <p>Looking a symbol up in a file that is already mapped ({@code dlopen} of its path) finds that
 * very copy: it never loads a second one. Unlike {@link NativeLibrary}, which opens a library of
 * its own by soname, this binds only what the caller found loaded.
 *
 * <p>Immutable and safe from any thread.
 *
 * @since 0.1
 */
@SuppressWarnings("restricted")
public final class SymbolTable {

    private final Map<String, MethodHandle> handles;
    private final String failure;

    private SymbolTable(Map<String, MethodHandle> handles, String failure) {
        this.handles = handles;
        this.failure = failure;
    }

    /**
     * Binds every function of {@code required} from {@code files} (searched in order).
     *
     * @param owner     the call layer: its module is the one a native-access message names
     * @param files     the loaded library files, found by the caller
     * @param required  each function's name and C signature
     * @param missing   the message, given the names of the functions none of the files has
     * @param exception the adapter's exception for a message
     * @return the table: complete, or with {@link #failure()} saying what is missing and every
     *         function a stand-in throwing it
     */
    public static SymbolTable bind(Class<?> owner, List<Path> files, Map<String, FunctionDescriptor> required,
                                   Function<List<String>, String> missing,
                                   Function<String, ? extends RuntimeException> exception) {
        SymbolLookup lookup = null;
        try {
            for (Path file : files) {
                SymbolLookup one = SymbolLookup.libraryLookup(file, Arena.global());
                lookup = lookup == null ? one : lookup.or(one);
            }
        } catch (IllegalCallerException e) {
            return unbound(required, NativeAccess.denied(owner, e).getMessage(), exception);
        }
        Map<String, MethodHandle> handles = new LinkedHashMap<>();
        List<String> absent = new ArrayList<>();
        for (var function : required.entrySet()) {
            if (lookup == null) {
                absent.add(function.getKey());
                continue;
            }
            lookup.find(function.getKey()).ifPresentOrElse(
                    address -> handles.put(function.getKey(), Linker.nativeLinker().downcallHandle(address, function.getValue())),
                    () -> absent.add(function.getKey()));
        }
        return absent.isEmpty() ? new SymbolTable(Map.copyOf(handles), null)
                : unbound(required, missing.apply(List.copyOf(absent)), exception);
    }

    /**
     * A table of stand-ins only, for when the library was not found: each throws the adapter's
     * exception with {@code failure}.
     *
     * @param required  each function's name and C signature
     * @param failure   why nothing was bound
     * @param exception the adapter's exception for a message
     * @return the table
     */
    public static SymbolTable unbound(Map<String, FunctionDescriptor> required, String failure,
                                      Function<String, ? extends RuntimeException> exception) {
        Map<String, MethodHandle> handles = new LinkedHashMap<>();
        for (var function : required.entrySet()) {
            handles.put(function.getKey(), Downcalls.failing(function.getValue().toMethodType(), () -> exception.apply(failure)));
        }
        return new SymbolTable(Map.copyOf(handles), failure);
    }

    /** {@return why the functions are not bound (the library, native access or symbols missing), or null when all are} */
    public String failure() {
        return failure;
    }

    /**
     * The downcall of one function of the table.
     *
     * @param function its name, one of the table's
     * @return the bound handle, or the stand-in throwing {@link #failure()}
     * @throws IllegalArgumentException if the function is not in the table (a bug of the call layer)
     */
    public MethodHandle handle(String function) {
        MethodHandle handle = handles.get(function);
        if (handle == null) {
            throw new IllegalArgumentException(function + " is not among the functions this table binds");
        }
        return handle;
    }
}
