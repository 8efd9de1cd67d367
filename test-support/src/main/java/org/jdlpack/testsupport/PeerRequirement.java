package org.jdlpack.testsupport;

import org.junit.jupiter.api.Assumptions;

/**
 * What a test does when a real peer (NumPy, PoCL, a GPU) is missing: with {@code CI=true} it
 * fails, so CI cannot pass by skipping the real thing; elsewhere it skips with the reason printed.
 */
public final class PeerRequirement {

    private PeerRequirement() {
    }

    /** Whether this run is CI, where required peers must be present. */
    public static boolean isCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    /** Fails in CI, skips elsewhere; never returns. */
    public static RuntimeException missing(String peer, String reason) {
        String message = peer + " is not available: " + reason;
        if (isCi()) {
            throw new AssertionError("CI=true and a required test peer is missing. " + message);
        }
        System.out.println("SKIPPED (" + message + ")");
        Assumptions.abort(message);
        throw new IllegalStateException("unreachable");
    }
}
