package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import org.jdlpack.abi.testing.NothingLeftBehind;
import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.ChildJvm;
import org.jdlpack.testsupport.PeerTensor;
import org.jdlpack.testsupport.Race;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The same foreign pointer taken twice while Java owns it (a retry, two code paths reading one
 * out-parameter) is refused, naming the address, and nothing is called: before, both takes were
 * accepted and the producer counted two deleter calls per tensor.
 */
@ExtendWith(NothingLeftBehind.class)
class DoubleTakeTest {

    private static final CPeer PEER = CPeer.get();

    @Test
    void importingALiveImportAgainIsRefusedAndTheDeleterRunsOnce() {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned().shape(3));
        String address = Long.toHexString(produced.pointer().address());
        try (ImportedTensor first = ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer())) {
            assertThatThrownBy(() -> ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer()))
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("0x" + address)
                    .hasMessageContaining("already owned");
            assertThatThrownBy(() -> ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer(), ImportLifetime.SHARED))
                    .isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> ImportedTensor.apply(ManagedTensorKind.VERSIONED, produced.pointer(), t -> t))
                    .isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> ImportedTensor.discard(ManagedTensorKind.VERSIONED, produced.pointer()))
                    .isInstanceOf(IllegalStateException.class);
            assertThat(PEER.deleterCalls(produced.id())).as("nothing was called").isZero();
            assertThat(first.layout().shape()).containsExactly(3); // the first owner is untouched
        }
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void anExportNotYetHandedOnIsOwnedByJavaAndAPointerIsFreeAgainOnceReleasedOrHandedOn() {
        {
            Arena arena = Arena.ofShared(); // closed by the owner's release action
            ExportOwner owner = ExportOwner.of(arena, arena::close);
            ExportedTensor export = owner.export(TensorSpec.of(arena.allocate(16), DLDataType.FLOAT32, 4), ExportOptions.LEGACY);
            owner.close();
            MemorySegment pointer = MemorySegment.ofAddress(export.address());
            assertThatThrownBy(() -> ImportedTensor.of(ManagedTensorKind.LEGACY, pointer)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("DLManagedTensor at 0x");
            assertThatThrownBy(() -> ImportedTensor.discard(ManagedTensorKind.LEGACY, pointer)).isInstanceOf(IllegalStateException.class);

            // Taken into an import: still owned by Java, so still refused.
            ImportedTensor tensor = export.importTensor();
            assertThatThrownBy(() -> ImportedTensor.of(ManagedTensorKind.LEGACY, pointer)).isInstanceOf(IllegalStateException.class);
            // Moved to a new lifetime inside Java: still owned, by the new tensor only.
            ImportedTensor moved = tensor.moveTo(ImportLifetime.SHARED);
            assertThatThrownBy(() -> ImportedTensor.of(ManagedTensorKind.LEGACY, pointer)).isInstanceOf(IllegalStateException.class);
            moved.close();
            assertThat(owner.isReleased()).isTrue();
        }

        // Consumed: the pointer has left Java, so whoever it went to may hand it back.
        CPeer.Produced other = PEER.make(PeerTensor.versioned());
        MemorySegment consumed = PeerHandles.holding(ManagedTensorKind.VERSIONED, other.pointer()).consume();
        ImportedTensor.of(ManagedTensorKind.VERSIONED, consumed).close();
        assertThat(PEER.deleterCalls(other.id())).isEqualTo(1);
    }

    @RepeatedTest(20)
    void takesRacingFromEightThreadsHaveExactlyOneWinner() throws InterruptedException {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        List<ImportedTensor> winners = java.util.Collections.synchronizedList(new ArrayList<>());
        Race.Outcome outcome = Race.run(8, () -> winners.add(ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer(),
                ImportLifetime.SHARED)));
        assertThat(outcome).isEqualTo(new Race.Outcome(1, 7));
        winners.forEach(ImportedTensor::close);
        assertThat(PEER.deleterCalls(produced.id())).isEqualTo(1);
    }

    @Test
    void tensOfThousandsOfLiveClaimsSpillPastFullBucketsAndStillRefuseDuplicates() {
        // Addresses are only claimed, never read: 50,000 fill the 2048 buckets of 7 entries past spilling.
        int n = 50_000;
        long base = 0x7000_0000_0000L;
        int[] tickets = new int[n];
        for (int i = 0; i < n; i++) {
            tickets[i] = OwnedPointers.claim(ManagedTensorKind.VERSIONED, base + 16L * i);
        }
        assertThat(java.util.Arrays.stream(tickets).filter(t -> t == OwnedPointers.SPILLED).count()).as("spilled").isPositive();
        for (int i = 0; i < n; i += 997) {
            long address = base + 16L * i;
            assertThatThrownBy(() -> OwnedPointers.claim(ManagedTensorKind.VERSIONED, address)).isInstanceOf(IllegalStateException.class);
        }
        for (int i = 0; i < n; i++) {
            OwnedPointers.drop(base + 16L * i, tickets[i]);
        }
        for (int i = 0; i < n; i += 997) {
            OwnedPointers.drop(base + 16L * i, OwnedPointers.claim(ManagedTensorKind.VERSIONED, base + 16L * i));
        }
    }

    /** Child JVM, with leak tracking on: takes one pointer twice and prints the refusal's cause. */
    public static void main(String[] args) {
        CPeer.Produced produced = PEER.make(PeerTensor.versioned());
        try (ImportedTensor first = firstOwner(produced)) {
            System.out.println("first owner " + first.managedTensorAddress());
            try {
                ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer());
                System.out.println("RESULT taken twice");
            } catch (IllegalStateException e) {
                StackTraceElement site = e.getCause() == null ? null : java.util.Arrays.stream(e.getCause().getStackTrace())
                        .filter(f -> f.getMethodName().equals("firstOwner")).findFirst().orElse(null);
                System.out.println("RESULT refused, first owner created in " + (site == null ? "?" : site.getMethodName()));
            }
        }
        System.out.println("RESULT deleter calls " + PEER.deleterCalls(produced.id()));
    }

    private static ImportedTensor firstOwner(CPeer.Produced produced) {
        return ImportedTensor.of(ManagedTensorKind.VERSIONED, produced.pointer());
    }

    @Test
    void withLeakTrackingTheRefusalSaysWhereTheFirstOwnerWasCreated() {
        ChildJvm.Outcome outcome = ChildJvm.create().options("-Dorg.jdlpack.leakTracking=true").run(DoubleTakeTest.class);
        assertThat(outcome.exitCode()).as(outcome.output()).isZero();
        assertThat(outcome.result()).as(outcome.output())
                .isEqualTo("RESULT refused, first owner created in firstOwner\nRESULT deleter calls 1");
    }
}
