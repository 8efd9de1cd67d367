package org.jdlpack.python.internal.bridge;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.jdlpack.abi.DLDataTypeCode;
import org.jdlpack.python.internal.capi.LibPython;
import org.jdlpack.python.internal.capi.LibPythonErrors;
import org.jdlpack.python.internal.capi.LibPythonObjects;

/**
 * PyTorch's view bits that change a tensor's values without changing its memory, for the
 * exchange API's fast path: the conjugate bit ({@code t.conj()} of a complex tensor: the memory
 * holds the values' conjugates) and the negative bit ({@code t.conj().imag}: the memory holds the
 * values negated). DLPack carries memory only, so such a view would arrive with other values than
 * torch shows. Torch's {@code __dlpack__} refuses the conjugate bit and passes the negative bit;
 * its exchange API checks neither.
 *
 * <p>This class only says whether a tensor has one of the bits: the import then gives the tensor
 * back and goes through {@code __dlpack__}, where the bootstrap's {@code _capsule_of} refuses it
 * with a {@code BufferError} that names the fix, on that path and this one alike. (A third flag,
 * torch's ZeroTensor, has a NULL data pointer, which {@code ImportedTensor.of} refuses for a
 * tensor of one element or more.)
 *
 * <p>The cost, one method call per import of a torch tensor ({@code is_neg()}, and
 * {@code is_conj()} for complex dtypes only), is paid only by types that have both methods,
 * recognised once per type by {@link #recognises}.
 *
 * <p>Every method needs the GIL and makes only downcalls. Thread safety: the interned names are
 * written once, under the GIL, before the first type that has them is published by
 * {@link ExchangeImports}' volatile cache; they are read only after that.
 */
public final class TorchViewBits {

    private static final MemorySegment IS_NEG_CHARS = Arena.global().allocateFrom("is_neg");
    private static final MemorySegment IS_CONJ_CHARS = Arena.global().allocateFrom("is_conj");
    /** {@code PY_VECTORCALL_ARGUMENTS_OFFSET} is not set: {@code args[0]} is the object, and Python may not write {@code args[-1]}. */
    private static final long ONE_ARGUMENT = 1;

    /** The interned names, kept for the life of the process; 0 until the first type that has them. */
    private static long isNeg;
    private static long isConj;

    private TorchViewBits() {
    }

    /**
     * {@return whether objects of {@code type} may carry torch's view bits: the type has
     * {@code is_neg} and {@code is_conj}, as {@code torch.Tensor} and its subclasses have} Leaves
     * no exception set.
     */
    static boolean recognises(MemorySegment type) {
        if (LibPythonObjects.objectHasAttrString(type, IS_NEG_CHARS) == 0 || LibPythonObjects.objectHasAttrString(type, IS_CONJ_CHARS) == 0) {
            return false;
        }
        if (isNeg == 0) {
            isNeg = intern(IS_NEG_CHARS);
            isConj = intern(IS_CONJ_CHARS);
        }
        return true;
    }

    /**
     * {@return whether {@code tensor}, an object of a type this class {@linkplain #recognises
     * recognises}, shows other values than its memory holds} A call that raises counts as yes (the
     * exception cleared): {@code __dlpack__} then decides, and says what is wrong.
     *
     * @param arena    for the call's argument vector
     * @param dtypeCode the {@code DLDataType.code} of the tensor the exchange API made of it
     */
    static boolean valuesDifferFromMemory(Arena arena, MemorySegment tensor, int dtypeCode) {
        MemorySegment arguments = arena.allocate(ADDRESS);
        arguments.set(ADDRESS, 0, tensor);
        // The negative bit can be set on a view of any dtype (torch._neg_view); the conjugate bit only on complex ones.
        return isSet(isNeg, arguments) || dtypeCode == DLDataTypeCode.COMPLEX.code() && isSet(isConj, arguments);
    }

    /** {@return whether {@code tensor.name()} returned anything but False} */
    private static boolean isSet(long name, MemorySegment arguments) {
        MemorySegment result = LibPythonObjects.vectorcallMethod(MemorySegment.ofAddress(name), arguments, ONE_ARGUMENT, MemorySegment.NULL);
        if (result.address() == 0) {
            LibPythonErrors.errClear();
            return true;
        }
        LibPythonObjects.decRef(result);
        return result.address() != LibPython.FALSE.address(); // False is a static object of libpython: never freed
    }

    private static long intern(MemorySegment chars) {
        MemorySegment name = LibPythonObjects.unicodeInternFromString(chars);
        if (name.address() == 0) {
            LibPythonErrors.errClear();
            throw new IllegalStateException("PyUnicode_InternFromString failed");
        }
        return name.address();
    }
}
