package org.jdlpack.javacpp.pytorch;

import org.bytedeco.pytorch.Scalar;
import org.bytedeco.pytorch.Tensor;
import org.bytedeco.pytorch.global.torch;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ImportLifetime;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.abi.testing.VirtualThreadStress;
import org.junit.jupiter.api.Test;

/**
 * {@link TorchDLPack} from many virtual threads on several carriers, in a child JVM (a C++ abort
 * must fail this test, not the build): Java tensors into torch and torch tensors into Java, each
 * released in both orders and on another virtual thread; every Java owner released once and
 * {@code DLPackStats} quiet after ({@link VirtualThreadStress}).
 */
class TorchVirtualThreadsTest {

    /** Torch for the run: versioned exports (libtorch 2.10 takes both kinds). */
    private record Torch(TorchDLPack dlpack) implements VirtualThreadStress.Library<Tensor> {

        @Override
        public Tensor fromJava(ExportOwner owner, TensorSpec spec) {
            return dlpack.toTensor(owner.export(spec));
        }

        @Override
        public Tensor ramp(int n) {
            try (Tensor range = torch.arange(new Scalar(4.0)); Scalar offset = new Scalar(n)) {
                return range.add(offset);
            }
        }

        @Override
        public float get(Tensor tensor, int index) {
            try (Tensor element = tensor.select(0, index)) {
                return element.item_float();
            }
        }

        @Override
        public ImportedTensor toJava(Tensor tensor, ImportLifetime lifetime) {
            return dlpack.importTensor(tensor, lifetime);
        }
    }

    /** Child JVM: the run, then its summary line. */
    public static void main(String[] args) throws InterruptedException {
        Torch library = new Torch(TorchDLPack.get());
        VirtualThreadStress.run(() -> library);
    }

    @Test
    void manyVirtualThreadsOnSeveralCarriersHandTensorsBothWays() {
        VirtualThreadStress.assertPassed(VirtualThreadStress.child().run(TorchVirtualThreadsTest.class));
    }
}
