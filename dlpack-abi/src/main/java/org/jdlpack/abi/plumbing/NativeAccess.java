package org.jdlpack.abi.plumbing;

import java.lang.System.Logger.Level;

/**
 * Tells users how to grant native access when they have not.
 *
 * <p>Without {@code --enable-native-access} the JDK either warns at the first restricted call
 * (the default on JDK 22 to 25) or throws {@link IllegalCallerException} (with
 * {@code --illegal-native-access=deny}). Neither message says what to pass for the way jdlpack
 * was loaded, so this class says it: the module name on the module path, {@code ALL-UNNAMED} on
 * the class path.
 */
public final class NativeAccess {

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
     * Warns once through {@link System.Logger} when native access is not enabled for the module of
     * {@code type}; called before the module's first restricted call.
     *
     * @param type a class of the module that makes restricted calls
     */
    public static void warnIfDisabled(Class<?> type) {
        if (!type.getModule().isNativeAccessEnabled()) {
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
