package org.jdlpack.cuda;

/**
 * The jdlpack side of the GPU check's bandwidth table: host-to-device and device-to-host copies
 * of pinned memory through {@link CudaMemory}, the same sizes and repeats as cuda_bandwidth.c.
 * Prints "java_h2d_gbps X" and "java_d2h_gbps Y".
 */
public final class CudaBandwidth {

    private CudaBandwidth() {
    }

    /**
     * Runs the measurement.
     *
     * @param args bytes (default 256 MiB) and repeats (default 20)
     */
    public static void main(String[] args) {
        long bytes = args.length > 0 ? Long.parseLong(args[0]) : 256L << 20;
        int repeats = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        try (CudaMemory host = CudaMemory.allocate(CudaMemory.Kind.PINNED, 0, bytes);
             CudaMemory device = CudaMemory.allocate(CudaMemory.Kind.DEVICE, 0, bytes)) {
            var hostSegment = host.hostSegment();
            for (int direction = 0; direction < 2; direction++) {
                Runnable copy = direction == 0 ? () -> device.copyFromHost(0, hostSegment) : () -> device.copyToHost(0, hostSegment);
                copy.run(); // warm-up
                long start = System.nanoTime();
                for (int r = 0; r < repeats; r++) {
                    copy.run();
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("%s %.2f%n", direction == 0 ? "java_h2d_gbps" : "java_d2h_gbps", (double) bytes * repeats / seconds / 1e9);
            }
        }
    }
}
