package org.jdlpack.testsupport;

/**
 * What the C peer should produce: every field of a managed tensor, valid or not. Defaults are a
 * valid versioned 1.3, 2x3, compact, float32 CPU tensor with a counting deleter.
 */
public final class PeerTensor {

    boolean legacy;
    int major = 1;
    int minor = 3;
    long flags;
    int ndim = 2;
    long[] shape = {2, 3};
    boolean nullShape;
    long[] strides = {3, 1};
    int code = 2;
    int bits = 32;
    int lanes = 1;
    long byteOffset;
    int dataMode;
    int deviceType = 1;
    boolean nullDeleter;

    /** A versioned 1.3 tensor. */
    public static PeerTensor versioned() {
        return new PeerTensor();
    }

    /** A legacy DLManagedTensor. */
    public static PeerTensor legacy() {
        PeerTensor t = new PeerTensor();
        t.legacy = true;
        return t;
    }

    public PeerTensor version(int major, int minor) {
        this.major = major;
        this.minor = minor;
        return this;
    }

    public PeerTensor flags(long flags) {
        this.flags = flags;
        return this;
    }

    /** Sets shape and ndim together, with compact strides. */
    public PeerTensor shape(long... shape) {
        this.shape = shape.clone();
        this.ndim = shape.length;
        long[] s = new long[shape.length];
        long stride = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            s[i] = stride;
            stride *= Math.max(1, shape[i]);
        }
        this.strides = s;
        return this;
    }

    /** Overrides ndim alone, leaving the shape array as it is. */
    public PeerTensor ndim(int ndim) {
        this.ndim = ndim;
        return this;
    }

    public PeerTensor nullShape() {
        this.nullShape = true;
        return this;
    }

    /** Strides in elements; null writes a NULL strides pointer. */
    public PeerTensor strides(long... strides) {
        this.strides = strides == null ? null : strides.clone();
        return this;
    }

    public PeerTensor dtype(int code, int bits, int lanes) {
        this.code = code;
        this.bits = bits;
        this.lanes = lanes;
        return this;
    }

    public PeerTensor byteOffset(long byteOffset) {
        this.byteOffset = byteOffset;
        return this;
    }

    /** NULL data pointer. */
    public PeerTensor nullData() {
        this.dataMode = 1;
        return this;
    }

    /** A small dummy buffer instead of one sized to the tensor. */
    public PeerTensor dummyData() {
        this.dataMode = 2;
        return this;
    }

    public PeerTensor device(int deviceType) {
        this.deviceType = deviceType;
        return this;
    }

    public PeerTensor nullDeleter() {
        this.nullDeleter = true;
        return this;
    }

    public boolean isLegacy() {
        return legacy;
    }
}
