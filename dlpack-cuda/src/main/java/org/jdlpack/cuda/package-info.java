/**
 * CUDA DLPack tensors through libcudart downcalls: device, pinned and managed memory and their
 * exports ({@link org.jdlpack.cuda.CudaMemory}), host copies of imported CUDA tensors
 * ({@link org.jdlpack.cuda.CudaTensorView}), streams and the array-API stream handshake
 * ({@link org.jdlpack.cuda.StreamContract}).
 */
package org.jdlpack.cuda;
