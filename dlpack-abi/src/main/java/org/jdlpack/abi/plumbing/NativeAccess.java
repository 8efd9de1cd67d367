package org.jdlpack.abi.plumbing;

import java.lang.System.Logger.Level;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tells users how to grant native access when they have not.
 *
 * <p>Without {@code --enable-native-access} the JDK either warns at the first restricted call
 * (the default on JDK 22 to 25) or throws {@link IllegalCallerException} (with
 * {@code --illegal-native-access=deny}). Neither message says what to pass for the way jdlpack
 * was loaded, so this class says it: the module name on the module path, {@code ALL-UNNAMED} on
 * the class path.
 *
 * @since 0.1
 */
public final class NativeAccess {

    /** The modules warned about: the JDK warns once per module, and so does jdlpack. */
    private static final Set<Module> WARNED = ConcurrentHashMap.newKeySet();

    private NativeAccess() {
    }

    /**
     * The exact flag that grants native access to the module of {@code type}.
     *
     * @param type a class of the module that makes restricted calls
     * @return for example {@code --enable-native-access=org.jdlpack.abi} or
     *         {@code --enable-native-access=ALL-UNNAMED}
     */
    public static String flagFor(Class<?> type) {
        Module module = type.getModule();
        return "--enable-native-access=" + (module.isNamed() ? module.getName() : "ALL-UNNAMED");
    }

    /**
     * The message given when native access is missing.
     *
     * @param type a class of the module that makes restricted calls
     * @return the explanation naming the flag
     */
    public static String message(Class<?> type) {
        String where = type.getModule().isNamed() ? "module " + type.getModule().getName() : "the class path (unnamed module)";
        return "jdlpack calls native code through the FFM API and needs native access for " + where
                + ": run java with " + flagFor(type)
                + " (or, for an executable jar, the manifest attribute 'Enable-Native-Access: ALL-UNNAMED')";
    }

    /**
     * Whether the module of {@code type} has no native access yet. Asked before a restricted call,
     * for {@link #warnIfWasDisabled} after it: once the JDK has warned about a module's restricted
     * call, it enables native access for that module, so afterwards the answer is always no.
     *
     * @param type a class of the module that makes restricted calls
     * @return {@code true} if a restricted call now would be warned about or refused
     */
    public static boolean disabled(Class<?> type) {
        return !type.getModule().isNativeAccessEnabled();
    }

    /**
     * Warns once per module through {@link System.Logger} that native access was not enabled for
     * the module of {@code type}. Called after a restricted call succeeded, never before: under
     * {@code --illegal-native-access=deny} the call fails instead and {@link #denied} says the same
     * words, which a warning before it would print a second time.
     *
     * @param type        a class of the module that made the restricted call
     * @param wasDisabled {@link #disabled} asked before the call
     */
    public static void warnIfWasDisabled(Class<?> type, boolean wasDisabled) {
        if (wasDisabled && WARNED.add(type.getModule())) {
            Diagnostics.report(Level.WARNING, message(type), null);
        }
    }

    /**
     * Turns the JDK's refusal of a restricted call into one that names the flag to pass.
     *
     * @param type  a class of the module that made the restricted call
     * @param cause the JDK's exception
     * @return the exception to throw
     */
    public static IllegalCallerException denied(Class<?> type, IllegalCallerException cause) {
        return new IllegalCallerException(message(type), cause);
    }
}
