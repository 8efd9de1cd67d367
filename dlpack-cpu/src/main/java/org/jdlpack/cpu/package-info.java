/**
 * Host-accessible DLPack tensors: {@link org.jdlpack.cpu.HostTensorView} reads and writes elements of
 * any DLPack type in CPU-addressable memory (CPU, CUDA host, ROCm host, CUDA managed), and
 * {@link org.jdlpack.cpu.OwnedHostTensor} owns host memory that it exports without copying.
 */
package org.jdlpack.cpu;
