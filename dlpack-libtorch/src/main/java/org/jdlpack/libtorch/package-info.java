/**
 * What jdlpack's libtorch adapters share: {@link org.jdlpack.libtorch.AotiShim}, the typed calls
 * into libtorch's AOTInductor C shim ({@code aoti_torch_*}: C functions that catch every C++
 * exception and return a status), {@link org.jdlpack.libtorch.TorchDTypes}, the table of DLPack
 * types and the shim constants that name their torch types, and
 * {@link org.jdlpack.libtorch.TorchExport}, a torch tensor exported with a new handle as owner.
 * The version differences (which shim functions and float8 types a libtorch has) are parameters;
 * the mangled C++ entries ({@code at::fromDLPack}), whose signatures differ between libtorch
 * releases, stay in each adapter.
 */
package org.jdlpack.libtorch;
