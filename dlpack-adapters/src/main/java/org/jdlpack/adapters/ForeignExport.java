package org.jdlpack.adapters;

import java.lang.foreign.MemorySegment;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jdlpack.abi.ExportOptions;
import org.jdlpack.abi.ExportOwner;
import org.jdlpack.abi.ExportedTensor;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.abi.TensorSpec;

/**
 * A tensor of another runtime (torch, TensorFlow) exported over its own memory, with a native
 * handle of that runtime as the export's one hold on the memory: how every JVM-library adapter
 * exports.
 *
 * <p>Stateless and safe from any thread.
 *
 * @since 0.1
 */
public final class ForeignExport {

    private ForeignExport() {
    }

    /**
     * Exports the tensor {@code spec} describes, owned by a native handle: {@code release} drops the
     * handle once, when the owner's last reference goes (a consumer's deleter, on any thread), or
     * here if the export fails (the spec refused, say).
     *
     * @param handle  names the handle in jdlpack's messages (a leaked owner, a failed release)
     * @param release deletes the handle; it must not throw (it runs in deleters)
     * @param options the struct kind and the read-only flag
     * @param spec    reads the tensor behind the handle, after the handle is taken
     * @return the export
     */
    public static ExportedTensor export(Object handle, Runnable release, ExportOptions options, Supplier<TensorSpec> spec) {
        ExportOwner owner = ExportOwner.of(handle, release);
        try {
            return owner.export(spec.get(), options);
        } finally {
            owner.close();
        }
    }

    /**
     * The spec of a foreign tensor's memory: {@code data} reaching as far as {@code layout} does.
     *
     * @param data      the address of the first element (may be 0 for an empty tensor)
     * @param layout    its type, shape and strides
     * @param what      names the tensor in messages, such as {@code "the Tensor"}
     * @param exception the adapter's exception for a NULL data pointer under elements
     * @return the spec
     */
    @SuppressWarnings("restricted") // the runtime's own data: bounded to what the layout reaches
    public static TensorSpec spec(long data, TensorLayout layout, String what,
                                  Function<String, ? extends RuntimeException> exception) {
        long bytes = layout.extent().endByte();
        if (data == 0 && bytes > 0) {
            throw exception.apply(what + "'s data pointer is NULL for " + layout.elementCount() + " elements");
        }
        return TensorSpec.builder(MemorySegment.ofAddress(data).reinterpret(bytes), layout).build();
    }
}
