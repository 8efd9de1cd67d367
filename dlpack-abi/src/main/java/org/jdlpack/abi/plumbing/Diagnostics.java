package org.jdlpack.abi.plumbing;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * Reports problems through {@link System.Logger} (logger name {@code org.jdlpack}), so users need
 * no logging dependency. Safe to call from an upcall: it never throws.
 *
 * @since 0.1
 */
public final class Diagnostics {

    private static volatile Logger logger = System.getLogger("org.jdlpack");

    private Diagnostics() {
    }

    /**
     * Test seam: routes reports to {@code replacement}.
     *
     * @param replacement the logger to use from now on
     * @return the logger used until now
     */
    public static Logger replaceLogger(Logger replacement) {
        Logger previous = logger;
        logger = replacement;
        return previous;
    }

    /**
     * Does nothing but make sure this class is loaded and initialized, for code that must report
     * after its class loader may have been closed (the safety net's thread).
     */
    public static void ready() {
        // Empty: the call itself loads and initializes the class.
    }

    /**
     * Logs a message; swallows any failure of the logging system itself, because the caller may be
     * a native thread inside a deleter upcall, where an escaping exception ends the JVM.
     *
     * @param level   the level
     * @param message the message
     * @param thrown  an exception to attach, or null
     */
    public static void report(Level level, String message, Throwable thrown) {
        try {
            if (thrown == null) {
                logger.log(level, message);
            } else {
                logger.log(level, message, thrown);
            }
        } catch (Throwable ignored) {
            // Nothing is left to report to.
        }
    }
}
