package org.jdlpack.tensorflow;

import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.testing.VirtualThreadStress;
import org.junit.jupiter.api.Test;
import org.tensorflow.types.TFloat32;

/**
 * {@link TensorFlowDLPack} from many virtual threads on several carriers, in a child JVM (an
 * abort in TensorFlow must fail this test, not the build): Java tensors into TensorFlow and
 * TensorFlow tensors into Java, each released in both orders and on another virtual thread;
 * every Java owner released once and {@code DLPackStats} quiet after ({@link VirtualThreadStress}).
 */
class TensorFlowVirtualThreadsTest {

    /** TensorFlow Java for the run: legacy exports, the struct TensorFlow takes. */
    private record TensorFlow(TensorFlowDLPack dlpack) implements VirtualThreadStress.Library<TFloat32> {

        @Override
        public TFloat32 fromJava(ExportOwner owner, TensorSpec spec) {
            return (TFloat32) dlpack.toTensor(owner.export(spec, ExportOptions.LEGACY));
        }

        @Override
        public TFloat32 ramp(int n) {
            return TFloat32.vectorOf(n, n + 1, n + 2, n + 3);
        }

        @Override
        public float get(TFloat32 tensor, int index) {
            return tensor.getFloat(index);
        }

        @Override
        public ImportedTensor toJava(TFloat32 tensor, ImportLifetime lifetime) {
            return dlpack.importTensor(tensor, lifetime);
        }
    }

    /** Child JVM: the run, then its summary line. */
    public static void main(String[] args) throws InterruptedException {
        TensorFlow library = new TensorFlow(TensorFlowDLPack.get());
        VirtualThreadStress.run(() -> library);
    }

    @Test
    void manyVirtualThreadsOnSeveralCarriersHandTensorsBothWays() {
        VirtualThreadStress.assertPassed(VirtualThreadStress.child().run(TensorFlowVirtualThreadsTest.class));
    }
}
