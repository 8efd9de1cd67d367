package org.jdlpack.abi.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.jdlpack.abi.DLPackStats;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test that leaves an export, an owned managed tensor, an export owner or header memory behind, or that
 * made a deleter fail or be called for something that was not a live export.
 *
 * <p>Lives in dlpack-abi's test jar, which every other module's tests depend on, so that it reads
 * {@link DLPackStats} directly; test-support, which dlpack-abi's own tests use, cannot depend on
 * dlpack-abi.
 */
public final class NothingLeftBehind implements BeforeEachCallback, AfterEachCallback {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(NothingLeftBehind.class);

    /** Made by JUnit for {@code @ExtendWith(NothingLeftBehind.class)}. */
    public NothingLeftBehind() {
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NS).put("bogus", DLPackStats.bogusDeleterCalls());
        context.getStore(NS).put("failures", DLPackStats.deleterFailures());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        assertEquals(0L, DLPackStats.liveExports(), "live exports after the test");
        assertEquals(0L, DLPackStats.exportHeaderBytes(), "export header bytes after the test");
        assertEquals(0L, DLPackStats.ownedManagedTensors(), "owned managed tensors after the test");
        assertEquals(0L, DLPackStats.liveExportOwners(), "export owners (ExportOwner, OwnedHostTensor) not released after the test");
        assertEquals(context.getStore(NS).get("bogus", Long.class), DLPackStats.bogusDeleterCalls(), "bogus deleter calls during the test");
        assertEquals(context.getStore(NS).get("failures", Long.class), DLPackStats.deleterFailures(), "deleter failures during the test");
    }
}
