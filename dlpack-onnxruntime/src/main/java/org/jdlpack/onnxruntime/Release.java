package org.jdlpack.onnxruntime;

import java.util.function.Supplier;

import org.jdlpack.abi.plumbing.Ledger;

/**
 * What an {@link OrtInput} or {@link OrtOutput} lets go of at its end (its {@code OnnxTensor}
 * first, then the hold on the memory), run exactly once ({@link Ledger.RunOnce}): by the close or
 * the last run that held the object ({@link Lease}), or by the safety net when the user forgot the
 * object unclosed. The net then reports the user's object by name
 * ({@code OrtInput[...] from OwnedHostTensor[...]}), not the retain or import it holds inside,
 * which the user never made or gave away.
 *
 * <p>The ledger keeps this entry reachable while it is open, and the entry keeps the release
 * action and so what the object holds (the {@code OnnxTensor}, the retain of an
 * {@code OwnedHostTensor}, a moved import): those never look forgotten on their own. Neither the
 * action nor the name may reach the watched object, or it could never be collected.
 */
final class Release extends Ledger.RunOnce {

    private final Supplier<String> name;
    private final Runnable action;

    /**
     * @param watched the input or output the user holds
     * @param name    what reports call it; must not reach {@code watched}
     * @param action  the release; must not reach {@code watched}
     */
    Release(Object watched, Supplier<String> name, Runnable action) {
        super(watched);
        this.name = name;
        this.action = action;
        open();
    }

    /** Runs the action; its exceptions reach the caller (a close, or the safety net). */
    @Override
    protected void release() {
        action.run();
    }

    @Override
    protected String failed(Throwable failure) {
        if (failure instanceof WrongThreadException) {
            // A confined bridge's object: what it holds in this thread's arena (a moved import, a
            // copy) can be closed on that thread only. The OnnxTensor is closed; a moved import is
            // released by its own safety net, a copy's memory stays.
            return " (partly: what it holds is confined to the thread that made it, and a confined import is left to its own "
                    + "safety net; close the object on that thread)";
        }
        return super.failed(failure);
    }

    @Override
    protected String describe() {
        return name.get();
    }
}
