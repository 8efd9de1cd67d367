package org.jdlpack.abi;

import java.lang.foreign.MemorySegment;

/**
 * A C peer's managed tensor held by an {@link ExportedTensor}, for tests of that type's one-owner
 * state machine (consume, import, close, races, the safety net) against a deleter the C peer
 * counts exactly. Only jdlpack's own exports are held this way outside tests: a foreign pointer
 * goes through {@link ImportedTensor#of} or {@link ImportedTensor#discard}.
 */
final class PeerHandles {

    private PeerHandles() {
    }

    static ExportedTensor holding(ManagedTensorKind kind, MemorySegment pointer) {
        return new ExportedTensor(kind, Importer.checkedAddress(pointer));
    }
}
