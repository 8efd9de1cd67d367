package org.jdlpack.cpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;

import org.jdlpack.abi.DLDataType;
import org.jdlpack.abi.testing.NothingLeftBehind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A tensor's bytes from and to streams (through a small chunk) and channels (straight from native memory). */
@ExtendWith(NothingLeftBehind.class)
class TensorStreamsTest {

    private static byte[] floats(int n) {
        ByteBuffer bytes = ByteBuffer.allocate(n * 4).order(ByteOrder.nativeOrder());
        for (int i = 0; i < n; i++) {
            bytes.putFloat(i * 0.5f);
        }
        return bytes.array();
    }

    /** A stream that hands out at most 3 bytes per read, as a socket may. */
    private static InputStream trickle(byte[] bytes) {
        return new ByteArrayInputStream(bytes) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, 3));
            }
        };
    }

    @Test
    void streamsFillAndWriteExactlyTheTensorsBytesThroughASmallChunk() throws IOException {
        byte[] sent = floats(100 * 16);
        try (OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 100, 16)) {
            InputStream in = trickle(concat(sent, new byte[] {42}));
            TensorStreams.readFully(in, tensor.host(), new byte[7]);
            assertThat(in.read()).isEqualTo(42); // read to the tensor's end, not past it
            assertThat(tensor.host().getFloatAt(99, 15)).isEqualTo((100 * 16 - 1) * 0.5f);

            ByteArrayOutputStream out = new ByteArrayOutputStream();
            TensorStreams.write(tensor.host(), out, new byte[5]);
            assertThat(out.toByteArray()).isEqualTo(sent);
            out.reset();
            TensorStreams.write(tensor.host().rows(10, 12), out, new byte[4096]);
            assertThat(out.toByteArray()).isEqualTo(java.util.Arrays.copyOfRange(sent, 10 * 64, 12 * 64));
        }
    }

    @Test
    void aShortStreamSaysHowManyBytesCame() {
        try (OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4, 16)) {
            assertThatThrownBy(() -> TensorStreams.readFully(trickle(new byte[100]), tensor.host(), new byte[64]))
                    .isInstanceOf(EOFException.class).hasMessageContaining("ended after 100 of the 256 bytes");
        }
    }

    @Test
    void refusesStridedReadOnlyAndEmptyChunksNamingWhy() {
        try (OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4, 4)) {
            HostTensorView transposed = HostTensorView.of(tensor.host().segment(),
                    org.jdlpack.abi.TensorLayout.of(DLDataType.FLOAT32, new long[] {4, 4}, new long[] {1, 4}, 0, 0));
            assertThatThrownBy(() -> TensorStreams.write(transposed, new ByteArrayOutputStream(), new byte[8]))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not compact row-major");
            HostTensorView readOnly = HostTensorView.of(tensor.host().segment().asReadOnly(), DLDataType.FLOAT32, 4, 4);
            assertThatThrownBy(() -> TensorStreams.readFully(new ByteArrayInputStream(new byte[64]), readOnly, new byte[8]))
                    .isInstanceOf(UnsupportedOperationException.class).hasMessageContaining("read-only");
            assertThatThrownBy(() -> TensorStreams.write(tensor.host(), new ByteArrayOutputStream(), new byte[0]))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("chunk is empty");
        }
    }

    /** Over a real loopback socket: the channel copies go between the kernel and native memory. */
    @Test
    void channelsReadAndWriteStraightFromNativeMemoryOverASocket() throws Exception {
        byte[] sent = floats(4096 * 16); // 256 KiB: several socket reads
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             OwnedHostTensor in = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4096, 16);
             OwnedHostTensor back = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4096, 16)) {
            CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
                try (SocketChannel client = SocketChannel.open(server.getLocalAddress())) {
                    client.write(ByteBuffer.wrap(sent));
                    TensorStreams.readFully(client, back.host()); // the echo
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            try (SocketChannel accepted = server.accept()) {
                TensorStreams.readFully(accepted, in.host());
                TensorStreams.write(in.host(), accepted);
            }
            peer.get();
            byte[] echoed = new byte[sent.length];
            java.lang.foreign.MemorySegment.copy(back.host().segment(), java.lang.foreign.ValueLayout.JAVA_BYTE, 0, echoed, 0, echoed.length);
            assertThat(echoed).isEqualTo(sent);
            assertThat(in.host().getFloatAt(4095, 15)).isEqualTo((4096 * 16 - 1) * 0.5f);
        }
    }

    @Test
    void aChannelThatEndsEarlyAndANonBlockingOneAreRefused() throws Exception {
        try (OwnedHostTensor tensor = OwnedHostTensor.allocate(DLDataType.FLOAT32, 4, 16)) {
            assertThatThrownBy(() -> TensorStreams.readFully(Channels.newChannel(new ByteArrayInputStream(new byte[10])), tensor.host()))
                    .isInstanceOf(EOFException.class).hasMessageContaining("ended after 10 of the 256 bytes");
            try (SocketChannel unconnected = SocketChannel.open()) {
                unconnected.configureBlocking(false);
                assertThatThrownBy(() -> TensorStreams.write(tensor.host(), unconnected))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("non-blocking");
            }
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
