/**
 * Apache Arrow Java vectors as DLPack tensors, and DLPack tensors as Arrow vectors, without
 * copying: fixed-width vectors export as 1-D tensors, {@code FixedSizeList} columns as 2-D (and
 * deeper) tensors, and imported tensors are wrapped in Arrow buffers through Arrow's
 * {@code ForeignAllocation}.
 *
 * <p>Needs native access for jdlpack ({@code --enable-native-access=org.jdlpack.abi,org.jdlpack.arrow})
 * and, as Arrow Java does on recent JDKs, {@code --add-opens=java.base/java.nio=org.apache.arrow.memory.core}.
 */
module org.jdlpack.arrow {
    requires transitive org.jdlpack.abi;
    requires org.jdlpack.cpu;
    requires transitive org.apache.arrow.memory.core;
    requires transitive org.apache.arrow.vector;

    exports org.jdlpack.arrow;
}
