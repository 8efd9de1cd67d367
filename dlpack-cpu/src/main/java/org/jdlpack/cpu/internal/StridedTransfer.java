package org.jdlpack.cpu.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import org.jdlpack.abi.TensorExtent;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.cpu.HostTensorView;
import org.jdlpack.cpu.rows.RowCursor;

/**
 * Moves the elements of a strided tensor in device memory to or from a host tensor with as few
 * device transfers as the layout allows; the device modules (CUDA, OpenCL) supply the two
 * transfers their APIs offer.
 *
 * <ul>
 *   <li>a compact tensor: one contiguous transfer;</li>
 *   <li>a 2-D tensor of contiguous rows with a row pitch: one pitched transfer
 *       ({@code cudaMemcpy2D}, {@code clEnqueueReadBufferRect});</li>
 *   <li>anything else: reads move the whole span the tensor covers in one transfer and gather on
 *       the host; writes move row by row where rows are contiguous, else element by element,
 *       never touching bytes between elements.</li>
 * </ul>
 *
 * <p>Stateless and safe to use from any thread; the device decides what its transfers may share.
 */
public final class StridedTransfer {

    /** The transfers a device API offers, in bytes relative to the tensor's buffer. */
    public interface Device {

        /**
         * Copies {@code host.byteSize()} bytes between the device buffer at {@code deviceOffset}
         * and {@code host}; may be asynchronous until {@link #finish()}.
         *
         * @param toHost       the direction
         * @param deviceOffset byte offset in the device buffer
         * @param host         native host memory
         */
        void copyContiguous(boolean toHost, long deviceOffset, MemorySegment host);

        /**
         * Copies {@code rows} rows of {@code rowBytes} bytes, rows {@code devicePitch} bytes apart
         * on the device and {@code hostPitch} bytes apart on the host; may be asynchronous until
         * {@link #finish()}.
         *
         * @param toHost       the direction
         * @param deviceOffset byte offset of the first row in the device buffer
         * @param devicePitch  bytes from one row to the next on the device
         * @param host         native host memory holding the first row at offset 0
         * @param hostPitch    bytes from one row to the next on the host
         * @param rowBytes     bytes per row
         * @param rows         number of rows
         */
        void copyPitched(boolean toHost, long deviceOffset, long devicePitch, MemorySegment host, long hostPitch, long rowBytes,
                         long rows);

        /** Waits until every transfer issued so far is complete. */
        void finish();
    }

    private StridedTransfer() {
    }

    /**
     * Reads every element into a host tensor of the same dtype and shape.
     *
     * @param device      the device's transfers
     * @param layout      where the elements lie in the device buffer ({@code byte_offset} from its start)
     * @param destination the host tensor, in any layout
     * @throws IllegalArgumentException if dtype or shape differ
     */
    public static void read(Device device, TensorLayout layout, HostTensorView destination) {
        checkSameShape(layout, destination);
        long count = destination.layout().elementCount();
        if (count == 0) {
            return;
        }
        long elementBytes = layout.dtype().byteSize(false);
        boolean direct = destination.layout().isCompactRowMajor() && destination.segment().isNative() && elementBytes > 0;
        if (direct && layout.isCompactRowMajor()) {
            device.copyContiguous(true, layout.byteOffset(), compactBytes(destination, elementBytes));
            device.finish();
        } else if (direct && isPitchedMatrix(layout)) {
            long rowBytes = layout.shape(1) * elementBytes;
            device.copyPitched(true, layout.byteOffset(), layout.stride(0) * elementBytes, compactBytes(destination, elementBytes),
                    rowBytes, rowBytes, layout.shape(0));
            device.finish();
        } else {
            TensorExtent extent = layout.extent();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment span = arena.allocate(extent.byteSize(), 256);
                device.copyContiguous(true, layout.byteOffset() + extent.startByte(), span);
                device.finish();
                HostTensorView.of(span, layout.withByteOffset(-extent.startByte())).copyTo(destination);
            }
        }
    }

    /**
     * Writes every element from a host tensor of the same dtype and shape.
     *
     * @param device the device's transfers
     * @param layout where the elements lie in the device buffer ({@code byte_offset} from its start)
     * @param source the host tensor, in any layout
     * @throws IllegalArgumentException      if dtype or shape differ
     * @throws UnsupportedOperationException if the layout is read-only, or for packed sub-byte types
     */
    public static void write(Device device, TensorLayout layout, HostTensorView source) {
        if (layout.isReadOnly()) {
            throw new UnsupportedOperationException("the device tensor is read-only (DLPack READ_ONLY flag)");
        }
        checkSameShape(layout, source);
        long count = source.layout().elementCount();
        if (count == 0) {
            return;
        }
        long elementBytes = layout.dtype().byteSize(false);
        if (elementBytes == 0) {
            throw new UnsupportedOperationException("writing packed sub-byte device tensors is not supported");
        }
        try (Arena arena = Arena.ofConfined()) {
            boolean direct = source.layout().isCompactRowMajor() && source.segment().isNative();
            MemorySegment bytes = compactBytes(direct ? source : source.toContiguous(arena), elementBytes);
            if (layout.isCompactRowMajor()) {
                device.copyContiguous(false, layout.byteOffset(), bytes);
            } else if (isPitchedMatrix(layout)) {
                long rowBytes = layout.shape(1) * elementBytes;
                device.copyPitched(false, layout.byteOffset(), layout.stride(0) * elementBytes, bytes, rowBytes, rowBytes,
                        layout.shape(0));
            } else {
                // One transfer per contiguous row, else per element: never the bytes between elements.
                RowCursor rows = new RowCursor(layout.shape(), layout.strides());
                long run = rows.contiguous() ? rows.length() : 1;
                long position = 0;
                for (long r = 0; r < rows.count(); r++, rows.advance()) {
                    for (long i = 0; i < rows.length(); i += run, position += run) {
                        long offset = layout.byteOffset() + (rows.offset() + i * rows.stride()) * elementBytes;
                        device.copyContiguous(false, offset, bytes.asSlice(position * elementBytes, run * elementBytes));
                    }
                }
            }
            device.finish(); // before the arena that may hold the source goes
        }
    }

    /** The bytes of a compact host tensor's elements, from element 0. */
    private static MemorySegment compactBytes(HostTensorView compact, long elementBytes) {
        return compact.segment().asSlice(compact.origin(), compact.layout().elementCount() * elementBytes);
    }

    /**
     * Whether the tensor is a 2-D block of contiguous, non-overlapping rows with a non-negative row
     * pitch: what one rectangular transfer ({@code cudaMemcpy2D}, {@code clEnqueueReadBufferRect})
     * moves.
     */
    static boolean isPitchedMatrix(TensorLayout layout) {
        return layout.ndim() == 2 && (layout.stride(1) == 1 || layout.shape(1) == 1) && layout.stride(0) >= layout.shape(1);
    }

    private static void checkSameShape(TensorLayout layout, HostTensorView host) {
        if (!host.layout().dtype().equals(layout.dtype()) || !Arrays.equals(host.layout().shape(), layout.shape())) {
            throw new IllegalArgumentException("host tensor " + host + " does not match " + layout.dtype() + " "
                    + Arrays.toString(layout.shape()));
        }
    }
}
