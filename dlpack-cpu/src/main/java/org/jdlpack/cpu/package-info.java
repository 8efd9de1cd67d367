/**
 * Host-accessible DLPack tensors: {@link org.jdlpack.cpu.HostTensor} reads and writes elements of
 * any DLPack type in CPU-addressable memory (CPU, CUDA host, ROCm host, CUDA managed), and
 * {@link org.jdlpack.cpu.CpuTensor} owns host memory that it exports without copying.
 */
package org.jdlpack.cpu;
