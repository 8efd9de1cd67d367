package org.jdlpack.libtorch;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;
import org.jdlpack.adapters.ForeignExport;

/**
 * A torch tensor exported over its own memory: the export holds a new {@code at::Tensor} handle on
 * the tensor's implementation ({@code aoti_torch_new_tensor_handle}), deleted when the last
 * consumer calls the deleter, so the adapter's tensor object may be closed at any time. The
 * adapter has checked the device and the type before.
 *
 * <p>Stateless and safe from any thread.
 *
 * @since 0.1
 */
public final class TorchExport {

    private TorchExport() {
    }

    /**
     * Exports the torch tensor at {@code tensor}.
     *
     * @param shim    the adapter's shim
     * @param tensor  the {@code at::Tensor} address (an {@code AtenTensorHandle})
     * @param dtype   its DLPack type, already checked as carried
     * @param options the struct kind and the read-only flag
     * @param out     an 8-byte out-parameter of the shim's getters
     * @param what    names the tensor in messages, such as {@code "the Tensor"}
     * @param origin  said after the handle's name in messages, such as {@code " (of a DJL NDArray)"}, or empty
     * @return the export
     */
    public static ExportedTensor export(AotiShim shim, long tensor, DLDataType dtype, ExportOptions options,
                                        MemorySegment out, String what, String origin) {
        long handle = shim.newTensorHandle(tensor, out);
        return ForeignExport.export(new TorchHandle(handle, origin), () -> shim.deleteTensorObject(handle), options,
                () -> spec(shim, handle, dtype, out, what));
    }

    /** Names the handle in jdlpack's messages (a leaked owner, a failed release). */
    private record TorchHandle(long handle, String origin) {
        @Override
        public String toString() {
            return "at::Tensor handle 0x" + Long.toHexString(handle) + origin;
        }
    }

    /** The spec of the tensor behind {@code handle}, read through the shim. */
    @SuppressWarnings("restricted") // torch's own sizes and strides, ndim of each
    private static TensorSpec spec(AotiShim shim, long handle, DLDataType dtype, MemorySegment out, String what) {
        int ndim = Math.toIntExact(shim.dim(handle, out));
        long[] shape = MemorySegment.ofAddress(shim.sizes(handle, out)).reinterpret(ndim * 8L).toArray(JAVA_LONG);
        long[] strides = MemorySegment.ofAddress(shim.strides(handle, out)).reinterpret(ndim * 8L).toArray(JAVA_LONG);
        TensorLayout layout = TensorLayout.of(dtype, shape, strides, 0, 0);
        return ForeignExport.spec(shim.dataPtr(handle, out), layout, what, IllegalArgumentException::new);
    }
}
