/**
 * DJL {@code NDArray}s of the PyTorch engine to DLPack and back: {@link org.jdlpack.djl.DjlDLPack}
 * is the front door.
 *
 * <p>NDArray to Java goes through libtorch's C shim on the {@code at::Tensor} behind DJL's native
 * handle (a new tensor handle owns the memory, its delete is the release); Java to NDArray through
 * {@code at::fromDLPack}, which has no C entry in libtorch 2.7.1, called by its Itanium-mangled name
 * after every field was checked, so that no input reaches a C++ {@code throw}. Other DJL engines
 * are refused by name.
 */
package org.jdlpack.djl;
