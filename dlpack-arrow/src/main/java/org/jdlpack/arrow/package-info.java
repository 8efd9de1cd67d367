/**
 * Arrow vectors and DLPack tensors, both ways, without copying where the layouts agree.
 *
 * <ul>
 *   <li>{@link org.jdlpack.arrow.ArrowExport}: a fixed-width vector, or a {@code FixedSizeList}
 *       column of one, handed to a DLPack consumer. The export holds a reference on the vector's
 *       value buffer, so the memory stays valid until the consumer's deleter runs, even if the
 *       vector is closed first.</li>
 *   <li>{@link org.jdlpack.arrow.ArrowImport}: a DLPack tensor taken into an Arrow vector whose
 *       value buffer is the tensor's memory; the producer's deleter runs once, when the last
 *       Arrow buffer over it is released.</li>
 * </ul>
 *
 * <p>Where the layouts do not agree (Arrow's bit-packed booleans, nulls, strided tensors, types
 * one side lacks), the data is copied only when the caller allows it, and the copy is flagged:
 * {@code IS_COPIED} on an export, {@link org.jdlpack.arrow.ImportedVector#copyReason()} on an import.
 */
package org.jdlpack.arrow;
