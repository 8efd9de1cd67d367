package org.jdlpack.examples;

import java.io.PrintStream;
import java.util.List;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.ImportedTensor;
import org.jdlpack.abi.TensorLayout;
import org.jdlpack.opencl.OpenCLBuffer;
import org.jdlpack.opencl.OpenCLContext;
import org.jdlpack.opencl.OpenCLDevice;
import org.jdlpack.opencl.OpenCLDevices;
import org.jdlpack.opencl.OpenCLException;
import org.jdlpack.opencl.OpenCLKernel;
import org.jdlpack.opencl.OpenCLTensorView;

/**
 * Recipe: an OpenCL buffer shared as a {@code kDLOpenCL} tensor. {@code data} is the
 * {@code cl_mem} and {@code byte_offset} an offset inside it; a kernel works on the tensor in
 * place, and the host reads it back.
 */
public final class OpenCLRecipe {

    private OpenCLRecipe() {
    }

    /**
     * Runs the recipe.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        run(System.out);
    }

    /**
     * Runs the recipe, narrating to {@code out}.
     *
     * @param out where the story goes
     */
    public static void run(PrintStream out) {
        List<OpenCLDevice> devices;
        try {
            devices = OpenCLDevices.discover();
        } catch (OpenCLException e) {
            // No ICD loader, or no platform behind it (e.g. a machine without PoCL or a GPU driver).
            out.println("No OpenCL platform (" + e.getMessage() + "): install one such as pocl-opencl-icd.");
            return;
        }
        if (devices.isEmpty()) {
            out.println("No OpenCL device: install an OpenCL platform such as pocl-opencl-icd.");
            return;
        }
        out.println("Using " + devices.get(0));
        try (OpenCLContext context = OpenCLContext.create(devices.get(0));
             OpenCLBuffer buffer = context.allocate(16 * 4);
             OpenCLKernel square = context.compile("""
                     __kernel void square(__global float* data, long origin) {
                         long i = origin + get_global_id(0);
                         data[i] = data[i] * data[i];
                     }
                     """, "square")) {
            buffer.write(0, new float[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
            // Elements 4..11 as a 2x4 tensor: byte_offset 16 inside the cl_mem.
            try (ImportedTensor imported = buffer.export(TensorLayout.of(DLDataType.FLOAT32, 2, 4).withByteOffset(16))
                    .importTensor()) {
                OpenCLTensorView tensor = OpenCLTensorView.of(imported, context);
                square.run(8, tensor.handle(), tensor.layout().byteOffset() / 4);
                out.println("Squared on the device, read on the host: " + java.util.Arrays.toString(tensor.readFloats()));
            }
        }
    }
}
