package org.jdlpack.abi.plumbing;

/**
 * Implemented by the resource a sibling module gives an {@code ExportOwner} it builds on (an
 * {@code OwnedHostTensor}'s memory): messages and leak reports then name the object the user
 * holds, not the owner inside it, which the user never made.
 *
 * @since 0.1
 */
public interface OwnerName {

    /** {@return what messages call the owner, such as {@code OwnedHostTensor[FLOAT32 [2, 3]]}; never throws} */
    String ownerName();
}
