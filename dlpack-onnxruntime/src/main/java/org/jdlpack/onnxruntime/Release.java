package org.jdlpack.onnxruntime;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Supplier;

import org.jdlpack.abi.plumbing.Ledger;

/**
 * What an {@link OrtInput} or {@link OrtOutput} lets go of at its end (its {@code OnnxTensor}
 * first, then the hold on the memory), run exactly once: by the close or the last run that held
 * the object ({@link Lease}), or by the safety net when the user forgot the object unclosed. The
 * net then reports the user's object by name ({@code OrtInput[...] from OwnedHostTensor[...]}),
 * not the retain or import it holds inside, which the user never made or gave away.
 *
 * <p>The ledger keeps this entry reachable while it is open, and the entry keeps the release
 * action and so what the object holds (the {@code OnnxTensor}, the retain of an
 * {@code OwnedHostTensor}, a moved import): those never look forgotten on their own. Neither the
 * action nor the name may reach the watched object, or it could never be collected.
 */
final class Release extends Ledger.Entry {

    private static final VarHandle RAN;

    static {
        try {
            RAN = MethodHandles.lookup().findVarHandle(Release.class, "ran", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Supplier<String> name;
    private final Runnable action;
    @SuppressWarnings("unused") // accessed through RAN
    private volatile boolean ran;

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

    /** Runs the release unless it ran; its exceptions reach the caller (a close). */
    void run() {
        if (RAN.compareAndSet(this, false, true)) {
            settle();
            action.run();
        }
    }

    @Override
    protected void forgotten() {
        String what = describe();
        if (!RAN.compareAndSet(this, false, true)) {
            return;
        }
        settle();
        String left = "";
        try {
            action.run();
        } catch (WrongThreadException e) {
            // A confined bridge's object: what it holds in this thread's arena (a moved import, a
            // copy) can be closed on that thread only. The OnnxTensor is closed; a moved import is
            // released by its own safety net, a copy's memory stays.
            left = " (partly: what it holds is confined to the thread that made it, and a confined import is left to its own "
                    + "safety net; close the object on that thread)";
        } catch (RuntimeException | Error e) {
            left = " (its release failed: " + e + ")";
        }
        Ledger.reportLeak(what + left, creationSite());
    }

    @Override
    protected String describe() {
        return name.get();
    }
}
