package org.jdlpack.python.internal.bridge;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.jdlpack.python.internal.capi.LibPythonObjects;

/**
 * Answers remembered for a few Python objects, found by the object's address: what a
 * {@code __dlpack__} call worked out from an argument that cannot change (a keyword-name tuple,
 * a {@code max_version} tuple of exact ints), so that the next call with the same object reads
 * nothing from Python. Each object remembered is kept alive for the process (one reference never
 * given back), so its address can never name another object. At most {@code capacity} objects;
 * later ones are answered the slow way every time.
 *
 * <p>Thread safety: {@link #find} on any thread; {@link #remember} with the GIL held (the GIL
 * serialises the writers). One immutable snapshot is published through a volatile field, so a
 * reader sees an address only with its answer.
 *
 * @param <T> the answer
 */
final class KeptObjectAnswers<T> {

    /** The objects' addresses and their answers, index for index; replaced whole, never changed. */
    private record Snapshot(long[] addresses, Object[] answers) {
    }

    private final int capacity;
    private volatile Snapshot snapshot = new Snapshot(new long[0], new Object[0]);

    KeptObjectAnswers(int capacity) {
        this.capacity = capacity;
    }

    /** {@return the answer remembered for the object at {@code address}, or null} One comparison per object remembered. */
    @SuppressWarnings("unchecked") // only remember() writes answers, each a T
    T find(long address) {
        Snapshot s = snapshot;
        long[] addresses = s.addresses();
        for (int i = 0; i < addresses.length; i++) {
            if (addresses[i] == address) {
                return (T) s.answers()[i];
            }
        }
        return null;
    }

    /** Remembers {@code answer} for the object at {@code address} while there is room, keeping the object for the process. With the GIL. */
    void remember(long address, T answer) {
        Snapshot s = snapshot;
        int n = s.addresses().length;
        if (n < capacity) {
            LibPythonObjects.incRef(MemorySegment.ofAddress(address)); // never given back: the address is not reused
            long[] addresses = Arrays.copyOf(s.addresses(), n + 1);
            Object[] answers = Arrays.copyOf(s.answers(), n + 1);
            addresses[n] = address;
            answers[n] = answer;
            snapshot = new Snapshot(addresses, answers);
        }
    }
}
