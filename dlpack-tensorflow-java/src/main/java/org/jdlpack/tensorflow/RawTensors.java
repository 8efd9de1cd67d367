package org.jdlpack.tensorflow;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

import org.bytedeco.javacpp.Pointer;
import org.tensorflow.RawTensor;
import org.tensorflow.internal.c_api.TF_Tensor;
import org.tensorflow.types.family.TType;

/**
 * The one place that reaches into TensorFlow Java: a {@link RawTensor}'s {@code TF_Tensor*} and a
 * {@code TF_Tensor*} as a TensorFlow Java tensor.
 *
 * <p>TensorFlow Java 1.1.0 has no public way to do either. Its public API copies
 * ({@code Tensor.of(type, shape, buffer)}), and {@code ByteDataBuffer.accept} gives the data's
 * address but no hold on the buffer. The narrowest route is three package-private methods of
 * {@code RawTensor}: {@code nativeHandle()} (which throws once the tensor is closed),
 * {@code fromHandle(TF_Tensor)} (the constructor TensorFlow Java uses for its own results: the
 * tensor owns the handle, deleted when it is closed or collected) and {@code asTypedTensor()}. No
 * field is read and nothing is written. A private lookup needs the package open to this module:
 * true on the class path; on the module path only with
 * {@code --add-opens tensorflow/org.tensorflow=org.jdlpack.tensorflow}.
 *
 * <p>Stateless after initialization; safe from any thread.
 */
final class RawTensors {

    /** What is missing, or null when the three methods were found. */
    static final String FAILURE;
    private static final MethodHandle NATIVE_HANDLE;
    private static final MethodHandle FROM_HANDLE;
    private static final MethodHandle AS_TYPED;

    static {
        MethodHandle nativeHandle = null;
        MethodHandle fromHandle = null;
        MethodHandle asTyped = null;
        String failure = null;
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(RawTensor.class, MethodHandles.lookup());
            nativeHandle = lookup.findVirtual(RawTensor.class, "nativeHandle", MethodType.methodType(TF_Tensor.class));
            fromHandle = lookup.findStatic(RawTensor.class, "fromHandle", MethodType.methodType(RawTensor.class, TF_Tensor.class));
            asTyped = lookup.findVirtual(RawTensor.class, "asTypedTensor", MethodType.methodType(TType.class));
        } catch (IllegalAccessException e) {
            failure = "TensorFlow Java keeps a tensor's native handle package-private, and package org.tensorflow is not open "
                    + "to this adapter (" + e.getMessage() + "). On the module path add --add-opens "
                    + "tensorflow/org.tensorflow=" + RawTensors.class.getModule().getName();
        } catch (NoSuchMethodException e) {
            failure = "this TensorFlow Java's RawTensor lacks " + e.getMessage() + " (nativeHandle(), fromHandle(TF_Tensor) and "
                    + "asTypedTensor() of TensorFlow Java 1.1.0): use TensorFlow Java 1.1.0";
        }
        NATIVE_HANDLE = nativeHandle;
        FROM_HANDLE = fromHandle;
        AS_TYPED = asTyped;
        FAILURE = failure;
    }

    private RawTensors() {
    }

    /**
     * {@return the {@code TF_Tensor*} behind a TensorFlow Java tensor}
     *
     * @throws IllegalStateException if the tensor was closed (TensorFlow Java's message)
     */
    static long address(RawTensor tensor) {
        try {
            TF_Tensor handle = (TF_Tensor) NATIVE_HANDLE.invokeExact(tensor);
            return handle.address();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * Wraps a {@code TF_Tensor*} this adapter owns as a typed TensorFlow Java tensor, which from then
     * on owns it: {@code TF_DeleteTensor} runs when the tensor is closed, or after it was collected
     * (JavaCPP's deallocator).
     */
    static TType wrap(long tensorAddress) {
        TF_Tensor handle = new TF_Tensor(new Address(tensorAddress)).withDeallocator();
        try {
            RawTensor raw = (RawTensor) FROM_HANDLE.invokeExact(handle);
            return (TType) AS_TYPED.invokeExact(raw);
        } catch (RuntimeException | Error e) {
            handle.close(); // TF_DeleteTensor: drops the reference, as the tensor's close would
            throw e;
        } catch (Throwable t) {
            handle.close();
            throw new IllegalStateException(t);
        }
    }

    /** A JavaCPP pointer to an address TensorFlow gave: the argument TF_Tensor's public constructor takes. */
    private static final class Address extends Pointer {
        Address(long address) {
            this.address = address;
        }
    }
}
