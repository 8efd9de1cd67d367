/**
 * JavaCPP PyTorch tensors to DLPack and back: {@link org.jdlpack.javacpp.pytorch.TorchDLPack} is
 * the front door.
 *
 * <p>Torch to Java goes through libtorch's C shim (a new tensor handle owns the memory, its delete
 * is the release); Java to torch through {@code at::fromDLPack} and {@code at::fromDLPackVersioned},
 * which JavaCPP does not map, called by their Itanium-mangled names after every field was checked,
 * so that no input reaches a C++ {@code throw}.
 */
package org.jdlpack.javacpp.pytorch;
