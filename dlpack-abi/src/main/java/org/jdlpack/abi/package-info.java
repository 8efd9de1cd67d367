/**
 * The DLPack ABI for Java: value types, validation, and the ownership core that exports Java
 * memory to native code and imports native tensors into Java without copying.
 *
 * <h2>Ownership</h2>
 * A pointer to a {@code DLManagedTensorVersioned} or {@code DLManagedTensor} has exactly one owner
 * at a time, and its deleter runs exactly once.
 * <ul>
 *   <li>Exporting: an {@link org.jdlpack.abi.ExportOwner} keeps Java memory alive while exports of
 *       it exist; each export is a {@link org.jdlpack.abi.ExportedTensor} that is consumed by
 *       native code (which later calls the deleter) or closed.</li>
 *   <li>Importing: a producer's pointer becomes a {@link org.jdlpack.abi.ExportedTensor} or,
 *       directly, an {@link org.jdlpack.abi.ImportedTensor} whose close calls the producer's
 *       deleter.</li>
 * </ul>
 * Misuse (a second consume, a second close) is an {@link java.lang.IllegalStateException}, never
 * a second deleter call. The deleters jdlpack writes may run on any thread and never let an
 * exception escape into native code.
 *
 * <h2>Native access</h2>
 * This module makes restricted FFM calls. Run with {@code --enable-native-access=org.jdlpack.abi}
 * on the module path or {@code --enable-native-access=ALL-UNNAMED} on the class path.
 */
package org.jdlpack.abi;
