/**
 * What every JVM-library adapter needs, written once: {@link org.jdlpack.adapters.ConsumerGate}
 * reads an export's {@code DLTensor} the way a consumer's C++ entry point will and refuses, with a
 * Java exception naming the field, what the consumer does not take; {@link
 * org.jdlpack.adapters.ForeignExport} exports another runtime's tensor with a native handle of that
 * runtime as the owner. Binding a library's symbols is lower down, in dlpack-abi's plumbing
 * ({@code SymbolTable}).
 */
package org.jdlpack.adapters;
