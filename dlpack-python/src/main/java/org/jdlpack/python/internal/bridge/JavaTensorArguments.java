package org.jdlpack.python.internal.bridge;

import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDevice;
import org.jdlpack.python.DLPackSource;

/**
 * The Java tensors among a call's arguments, registered before the GIL is taken (a registration's
 * map write may block) and made Python objects under it ({@link JavaTensorType#newInstance}). A
 * registration is its object's once the object is made: Python code may keep the object past a
 * failed call, and dropping the object drops the registration. {@link #dropUnmade()} drops the
 * rest, after a failure.
 *
 * <p>Thread safety: one call's, on its thread.
 */
public final class JavaTensorArguments {

    /** 0 where the argument is no tensor, or its object has been made. */
    private final long[] registrations;
    /** Each source's device, asked once, before the GIL. */
    private final DLDevice[] devices;

    private JavaTensorArguments(int count) {
        registrations = new long[count];
        devices = new DLDevice[count];
    }

    /**
     * Registers every {@link DLPackSource} among {@code arguments}.
     *
     * @return the registrations, or null if no argument is a tensor
     * @throws NullPointerException naming the argument whose {@code device()} is null; what a
     *                              source's {@code device()} throws, as it is. Nothing stays
     *                              registered then.
     */
    public static JavaTensorArguments register(Object[] arguments) {
        JavaTensorArguments tensors = null;
        try {
            for (int i = 0; i < arguments.length; i++) {
                if (arguments[i] instanceof DLPackSource source) {
                    DLDevice device = source.device();
                    if (device == null) {
                        throw new NullPointerException("argument " + i + ": " + source + ".device() is null");
                    }
                    if (tensors == null) {
                        tensors = new JavaTensorArguments(arguments.length);
                    }
                    tensors.devices[i] = device;
                    tensors.registrations[i] = JavaTensors.register(source);
                }
            }
            return tensors;
        } catch (RuntimeException | Error e) {
            if (tensors != null) {
                tensors.dropUnmade();
            }
            throw e;
        }
    }

    /** {@return whether argument {@code i} is a tensor whose object is still to be made} */
    public boolean isTensor(int i) {
        return registrations[i] != 0;
    }

    /**
     * {@return a new Java tensor object for argument {@code i}} Needs the GIL. The registration is
     * the object's from here on, or dropped if the making fails.
     */
    public MemorySegment newObject(int i) {
        long id = registrations[i];
        registrations[i] = 0;
        try {
            return JavaTensorType.newInstance(id, devices[i]);
        } catch (RuntimeException | Error e) {
            JavaTensors.unregister(id); // no capsule was made, or its destructor ran: dropping again does nothing
            throw e;
        }
    }

    /** Drops the registrations whose objects were not made. */
    public void dropUnmade() {
        for (int i = 0; i < registrations.length; i++) {
            if (registrations[i] != 0) {
                JavaTensors.unregister(registrations[i]);
                registrations[i] = 0;
            }
        }
    }
}
