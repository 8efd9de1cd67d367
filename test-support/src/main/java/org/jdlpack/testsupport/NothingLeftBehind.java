package org.jdlpack.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test that leaves an export, an owned managed tensor or header memory behind, or that
 * made a deleter fail or be called for something that was not a live export.
 *
 * <p>The counters are {@code org.jdlpack.abi.DLPackStats}'s, looked up by name: this module cannot
 * depend on dlpack-abi, whose own tests use it (Maven refuses the cycle).
 */
public final class NothingLeftBehind implements BeforeEachCallback, AfterEachCallback {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(NothingLeftBehind.class);

    private static long stat(String name) {
        try {
            Class<?> stats = Class.forName("org.jdlpack.abi.DLPackStats");
            MethodHandle getter = MethodHandles.publicLookup().findStatic(stats, name, MethodType.methodType(long.class));
            return (long) getter.invokeExact();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("NothingLeftBehind needs dlpack-abi on the test class path", e);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NS).put("bogus", stat("bogusDeleterCalls"));
        context.getStore(NS).put("failures", stat("deleterFailures"));
    }

    @Override
    public void afterEach(ExtensionContext context) {
        assertEquals(0L, stat("liveExports"), "live exports after the test");
        assertEquals(0L, stat("exportHeaderBytes"), "export header bytes after the test");
        assertEquals(0L, stat("ownedManagedTensors"), "owned managed tensors after the test");
        assertEquals(context.getStore(NS).get("bogus", Long.class), stat("bogusDeleterCalls"), "bogus deleter calls during the test");
        assertEquals(context.getStore(NS).get("failures", Long.class), stat("deleterFailures"), "deleter failures during the test");
    }
}
