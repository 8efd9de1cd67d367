package org.jdlpack.abi.peer;

import static org.assertj.core.api.Assertions.assertThat;

import org.jdlpack.abi.DLPackStats;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test that leaves an export, an owned managed tensor or header memory behind, or that
 * made a deleter fail or be called for something that was not a live export.
 */
public final class NothingLeftBehind implements BeforeEachCallback, AfterEachCallback {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(NothingLeftBehind.class);

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NS).put("bogus", DLPackStats.bogusDeleterCalls());
        context.getStore(NS).put("failures", DLPackStats.deleterFailures());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        assertThat(DLPackStats.liveExports()).as("live exports after the test").isZero();
        assertThat(DLPackStats.exportHeaderBytes()).as("export header bytes after the test").isZero();
        assertThat(DLPackStats.ownedManagedTensors()).as("owned managed tensors after the test").isZero();
        assertThat(DLPackStats.bogusDeleterCalls()).as("bogus deleter calls during the test")
                .isEqualTo(context.getStore(NS).get("bogus", Long.class));
        assertThat(DLPackStats.deleterFailures()).as("deleter failures during the test")
                .isEqualTo(context.getStore(NS).get("failures", Long.class));
    }
}
