package org.jdlpack.abi;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

import org.jdlpack.testsupport.CPeer;
import org.jdlpack.testsupport.PeerTensor;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;

/**
 * The importer against managed tensors the C peer writes with random fields (valid, boundary and
 * hostile): each one is either imported with exactly the extent an independent BigInteger
 * computation gives, or rejected with a specific exception; either way its deleter runs exactly
 * once (counted in C).
 */
class ImporterPropertiesTest {

    private static final CPeer PEER = CPeer.get();
    private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);
    private static final BigInteger MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final AtomicLong TRIES = new AtomicLong();
    private static final AtomicLong ACCEPTED = new AtomicLong();

    /** One generated struct. */
    record Case(boolean legacy, int major, int minor, long flags, int ndim, long[] shape, boolean nullShape, long[] strides,
                int code, int bits, int lanes, long byteOffset, boolean nullData) {

        PeerTensor peerTensor() {
            PeerTensor t = legacy ? PeerTensor.legacy() : PeerTensor.versioned();
            t.version(major, minor).flags(flags).shape(shape).ndim(ndim).strides(strides).dtype(code, bits, lanes).byteOffset(byteOffset);
            if (nullShape) {
                t.nullShape();
            }
            return nullData ? t.nullData() : t.dummyData();
        }

        @Override
        public String toString() {
            return (legacy ? "legacy" : "v" + Integer.toUnsignedString(major) + "." + Integer.toUnsignedString(minor)) + " flags=" + flags
                    + " ndim=" + ndim + " shape=" + (nullShape ? "NULL" : Arrays.toString(shape)) + " strides=" + Arrays.toString(strides)
                    + " dtype=(" + code + "," + bits + "," + lanes + ") byte_offset=" + Long.toUnsignedString(byteOffset)
                    + (nullData ? " data=NULL" : "");
        }
    }

    private static long pick(SplittableRandom random, long[] hostile, int saneBound, int saneChance) {
        if (random.nextInt(100) < saneChance) {
            return random.nextInt(saneBound);
        }
        return random.nextBoolean() ? hostile[random.nextInt(hostile.length)] : random.nextLong();
    }

    static Case randomCase(SplittableRandom random) {
        boolean legacy = random.nextInt(10) < 3;
        int major = random.nextInt(100) < 92 ? 1 : new int[] {0, 2, 3, -1}[random.nextInt(4)];
        int minor = new int[] {0, 1, 2, 3, 4, 99, -1}[random.nextInt(7)];
        long flags = new long[] {0, 0, 1, 2, 4, 5, 1L << 40, -1L}[random.nextInt(8)];
        // 0 to 6: both sides of ImportedFields.INLINE_NDIM (shape and strides in fields up to 4, an array above)
        int ndim = random.nextInt(100) < 90 ? random.nextInt(7) : new int[] {-1, -7, Integer.MIN_VALUE, 64, 256, 257, 1000, 100_000}[random.nextInt(8)];
        int length = ndim < 0 || ndim >= 4096 ? 0 : ndim; // the peer copies min(ndim, 4095) entries
        long[] shape = new long[length];
        long[] hostileExtents = {-1, -2, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 31, 1L << 32, 1L << 40, 1L << 62, 3_037_000_500L};
        for (int i = 0; i < length; i++) {
            shape[i] = length > 8 ? 1 + random.nextInt(2) : pick(random, hostileExtents, 7, 85);
        }
        long[] strides = null;
        if (random.nextInt(100) >= 15) {
            strides = new long[length];
            long[] hostileStrides = {Long.MIN_VALUE, Long.MAX_VALUE, 1L << 40, -(1L << 40), 1L << 61, -(1L << 62), 4_611_686_018_427_387_904L};
            for (int i = 0; i < length; i++) {
                strides[i] = random.nextInt(100) < 85 ? random.nextInt(17) - 8 : hostileStrides[random.nextInt(hostileStrides.length)];
            }
        }
        int code;
        int bits;
        int lanes;
        if (random.nextInt(100) < 65) { // a valid type, packed sub-byte ones included
            int[][] valid = {{2, 32, 1}, {0, 8, 1}, {1, 64, 1}, {1, 4, 1}, {6, 1, 1}, {17, 4, 2}, {5, 64, 1}, {2, 16, 4}, {15, 6, 1}, {4, 16, 1}, {18, 32, 1}};
            int[] type = valid[random.nextInt(valid.length)];
            code = type[0];
            bits = type[1];
            lanes = type[2];
        } else {
            code = random.nextInt(100) < 90 ? random.nextInt(19) : new int[] {18, 19, 99, 255}[random.nextInt(4)];
            bits = new int[] {0, 1, 2, 3, 4, 6, 8, 8, 12, 16, 16, 32, 32, 64, 128, 255}[random.nextInt(16)];
            lanes = new int[] {0, 1, 1, 1, 1, 2, 4, 65535}[random.nextInt(8)];
        }
        long byteOffset = random.nextInt(100) < 85 ? random.nextInt(65) : new long[] {-1L, Long.MIN_VALUE, 1L << 62, Long.MAX_VALUE}[random.nextInt(4)];
        return new Case(legacy, major, minor, flags, ndim, shape, random.nextInt(100) < 4, strides, code, bits, lanes, byteOffset,
                random.nextInt(100) < 8);
    }

    @Provide
    Arbitrary<Case> structs() {
        return Arbitraries.randomValue(random -> randomCase(new SplittableRandom(random.nextLong())));
    }

    /** The independent verdict: null when the struct must be rejected, else its extent. */
    record Verdict(Class<? extends DLPackException> rejection, TensorExtent extent, long[] strides) {
    }

    /**
     * Host memory ends where user space ends: 2^47 on x86-64 (4-level paging), 2^48 on aarch64
     * (48-bit virtual addresses); no host extent may reach past it.
     */
    static final BigInteger USER_SPACE_END = switch (System.getProperty("os.arch")) {
        case "amd64", "x86_64" -> BigInteger.ONE.shiftLeft(47);
        case "aarch64", "arm64" -> BigInteger.ONE.shiftLeft(48);
        default -> MAX;
    };

    static Verdict oracle(Case c, long dataAddress) {
        if (!c.legacy && c.major != 1) {
            return new Verdict(UnsupportedVersionException.class, null, null);
        }
        Verdict invalid = new Verdict(InvalidTensorException.class, null, null);
        if (c.ndim < 0 || c.ndim > 256 || (c.nullShape && c.ndim > 0) || !validDtype(c.code, c.bits, c.lanes)) {
            return invalid;
        }
        BigInteger[] shape = new BigInteger[c.ndim];
        for (int i = 0; i < c.ndim; i++) {
            if (c.shape[i] < 0) {
                return invalid;
            }
            shape[i] = BigInteger.valueOf(c.shape[i]);
        }
        BigInteger[] strides = new BigInteger[c.ndim];
        for (int k = 0; k < c.ndim; k++) {
            if (c.strides != null) {
                strides[k] = BigInteger.valueOf(c.strides[k]);
            } else {
                BigInteger product = BigInteger.ONE;
                for (int j = k + 1; j < c.ndim; j++) {
                    product = product.multiply(shape[j].max(BigInteger.ONE));
                }
                if (product.compareTo(MAX) > 0) {
                    return invalid; // compact strides must be representable
                }
                strides[k] = product;
            }
        }
        if (c.byteOffset < 0) {
            return invalid;
        }
        BigInteger count = BigInteger.ONE;
        for (BigInteger extent : shape) {
            count = count.multiply(extent);
        }
        if (count.signum() == 0) {
            return new Verdict(null, TensorExtent.EMPTY, longs(strides));
        }
        if (count.compareTo(MAX) > 0) {
            return invalid;
        }
        BigInteger lowest = BigInteger.ZERO;
        BigInteger highest = BigInteger.ZERO;
        for (int i = 0; i < c.ndim; i++) {
            BigInteger reach = strides[i].multiply(shape[i].subtract(BigInteger.ONE));
            if (reach.signum() < 0) {
                lowest = lowest.add(reach);
            } else {
                highest = highest.add(reach);
            }
        }
        if (!fits(lowest) || !fits(highest.add(BigInteger.ONE))) {
            return invalid;
        }
        long bitsPerElement = (long) c.bits * c.lanes;
        boolean padded = !c.legacy && (c.flags & 4) != 0;
        BigInteger start;
        BigInteger end;
        if (bitsPerElement % 8 == 0 || padded) {
            BigInteger elementBytes = BigInteger.valueOf(bitsPerElement % 8 == 0 ? bitsPerElement / 8 : (long) ((c.bits + 7) / 8) * c.lanes);
            start = lowest.multiply(elementBytes);
            end = highest.add(BigInteger.ONE).multiply(elementBytes);
        } else {
            BigInteger startBit = lowest.multiply(BigInteger.valueOf(bitsPerElement));
            BigInteger endBit = highest.add(BigInteger.ONE).multiply(BigInteger.valueOf(bitsPerElement));
            if (!fits(startBit) || !fits(endBit)) {
                return invalid;
            }
            BigInteger[] startDivision = startBit.divideAndRemainder(BigInteger.valueOf(8));
            start = startDivision[1].signum() < 0 ? startDivision[0].subtract(BigInteger.ONE) : startDivision[0];
            end = endBit.add(BigInteger.valueOf(7)).divide(BigInteger.valueOf(8));
        }
        BigInteger size = end.subtract(start);
        if (!fits(start) || !fits(end) || !fits(size)) {
            return invalid;
        }
        if (c.nullData) {
            return invalid;
        }
        BigInteger origin = BigInteger.valueOf(dataAddress).add(BigInteger.valueOf(c.byteOffset));
        if (origin.add(start).signum() < 0 || origin.add(end).compareTo(USER_SPACE_END) > 0) {
            return invalid;
        }
        return new Verdict(null, new TensorExtent(start.longValueExact(), size.longValueExact()), longs(strides));
    }

    private static long[] longs(BigInteger[] values) {
        return Arrays.stream(values).mapToLong(BigInteger::longValueExact).toArray();
    }

    private static boolean fits(BigInteger value) {
        return value.compareTo(MAX) <= 0 && value.compareTo(MIN) >= 0;
    }

    /** The published bit widths per DLPack 1.3 type code (kDLBcomplex, 18, included), written out separately from DLDataTypeCode. */
    private static boolean validDtype(int code, int bits, int lanes) {
        if (bits == 0 || lanes == 0) {
            return false;
        }
        return switch (code) {
            case 0, 1 -> bits == 1 || bits == 2 || bits == 4 || bits == 8 || bits == 16 || bits == 32 || bits == 64;
            case 2 -> bits == 16 || bits == 32 || bits == 64;
            case 3 -> bits % 8 == 0;
            case 4 -> bits == 16;
            case 5 -> bits == 32 || bits == 64 || bits == 128;
            case 6 -> bits == 1 || bits == 8;
            case 7, 8, 9, 10, 11, 12, 13, 14 -> bits == 8;
            case 15, 16 -> bits == 6;
            case 17 -> bits == 4;
            case 18 -> bits == 32;
            default -> false;
        };
    }

    @Property(tries = 100_000)
    void everyStructIsImportedExactlyOrRejectedAndAlwaysDeletedOnce(@ForAll("structs") Case c) {
        CPeer.Produced produced = PEER.make(c.peerTensor());
        long data = c.nullData ? 0 : PEER.field(produced.pointer(), c.legacy, 10);
        Verdict verdict = oracle(c, data);
        ManagedTensorKind kind = c.legacy ? ManagedTensorKind.LEGACY : ManagedTensorKind.VERSIONED;
        try {
            ImportedTensor tensor = ImportedTensor.of(kind, produced.pointer());
            try {
                assertThat(verdict.rejection()).as("accepted, but the oracle rejects: %s", c).isNull();
                assertThat(tensor.layout().extent()).as("extent of %s", c).isEqualTo(verdict.extent());
                assertThat(tensor.layout().shape()).containsExactly(Arrays.copyOf(c.shape, c.ndim));
                assertThat(tensor.layout().strides()).as("strides of %s", c).containsExactly(verdict.strides());
                ACCEPTED.incrementAndGet();
            } finally {
                tensor.close();
            }
        } catch (DLPackException e) {
            assertThat(verdict.rejection()).as("rejected (%s), but the oracle accepts: %s", e.getMessage(), c).isNotNull();
            assertThat(e).as("%s", c).isInstanceOf(verdict.rejection());
            assertThat(e.getMessage()).as("names a field").containsAnyOf("DLTensor.", "DLManagedTensorVersioned.");
        }
        assertThat(PEER.deleterCalls(produced.id())).as("deleter calls for %s", c).isEqualTo(1);
        if (TRIES.incrementAndGet() % 5000 == 0) {
            PEER.reset(); // Java holds none of the produced tensors between tries
        }
    }

    @AfterContainer
    static void report() {
        System.out.println("Importer properties: " + TRIES.get() + " generated managed tensors checked, " + ACCEPTED.get()
                + " imported, the rest rejected; every deleter ran exactly once");
        assertThat(DLPackStats.ownedManagedTensors()).isZero();
    }
}
