package io.netreduce.wire.udp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The native batched UDP I/O through real loopback sockets: a GSO run gathered from
 * scattered pieces of the buffer leaves as one super-datagram and arrives, with GRO, in
 * fewer messages than segments, each with its segment size and its sender's address, bytes
 * in order; a single datagram after it arrives as itself; the receive timeout and a bind
 * conflict behave as documented. The library must load under CI=true (the build machine has
 * gcc); a machine without it skips this test and runs the Netty paths only.
 */
@Timeout(30)
class NativeUdpTest {
    private static final int LOOPBACK = (127 << 24) | 1;

    @BeforeEach
    void loaded() {
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(NativeUdp.available(), NativeUdp.describe());
        }
        Assumptions.assumeTrue(NativeUdp.available(), NativeUdp.describe());
    }

    private static IntBuffer ints(int n) {
        return ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder()).asIntBuffer();
    }

    @Test
    void aGsoRunArrivesCoalescedAndASingleDatagramAsItself() {
        int rx = NativeUdp.open(LOOPBACK, 0, 1 << 20, 1 << 20, true);
        int tx = NativeUdp.open(LOOPBACK, 0, 1 << 20, 1 << 20, false);
        try {
            int rxPort = NativeUdp.localPort(rx);
            int txPort = NativeUdp.localPort(tx);
            long seed = 7;
            byte[] bytes = new byte[10_000 + 300];
            new Random(seed).nextBytes(bytes);
            ByteBuffer out = ByteBuffer.allocateDirect(bytes.length).put(0, bytes);
            // Run 1: ten segments of 1000 bytes (the last 700), taken from the buffer in reverse order.
            IntBuffer plan = ints(64);
            plan.put(LOOPBACK).put(rxPort).put(1000).put(10);
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            for (int k = 0; k < 9; k++) {
                plan.put((9 - k) * 1000).put(1000);
                expected.write(bytes, (9 - k) * 1000, 1000);
            }
            plan.put(0).put(700);
            expected.write(bytes, 0, 700);
            // Run 2: one datagram of 300 bytes.
            plan.put(LOOPBACK).put(rxPort).put(0).put(1).put(10_000).put(300);
            expected.write(bytes, 10_000, 300);
            assertEquals(2, NativeUdp.send(tx, out, plan, 2, 100));

            ByteBuffer in = ByteBuffer.allocateDirect(4 * 65_536);
            IntBuffer meta = ints(4 * NativeUdp.META_INTS);
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            int messages = 0;
            int segments = 0;
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (got.size() < expected.size() && System.nanoTime() < deadline) {
                int n = NativeUdp.receive(rx, in, 65_536, 4, meta, 1000);
                assertTrue(n >= 0, "errno " + -n);
                for (int i = 0; i < n; i++) {
                    int length = meta.get(NativeUdp.META_INTS * i);
                    int segment = meta.get(NativeUdp.META_INTS * i + 3);
                    assertEquals(LOOPBACK, meta.get(NativeUdp.META_INTS * i + 1), "source address");
                    assertEquals(txPort, meta.get(NativeUdp.META_INTS * i + 2), "source port");
                    assertTrue(segment == 1000 || segment == length, "segment " + segment + " of " + length);
                    byte[] b = new byte[length];
                    in.get(i * 65_536, b);
                    got.writeBytes(b);
                    messages++;
                    segments += (length + segment - 1) / segment;
                }
            }
            assertArrayEquals(expected.toByteArray(), got.toByteArray(), "seed " + seed);
            assertEquals(11, segments);
            assertTrue(messages < 11, "GRO coalesced nothing: " + messages + " messages");
        } finally {
            NativeUdp.close(rx);
            NativeUdp.close(tx);
        }
    }

    @Test
    void anIdleReceiveReturnsNothingAfterItsTimeout() {
        int rx = NativeUdp.open(LOOPBACK, 0, 0, 0, true);
        try {
            long t0 = System.nanoTime();
            assertEquals(0, NativeUdp.receive(rx, ByteBuffer.allocateDirect(65_536), 65_536, 1,
                    ints(NativeUdp.META_INTS), 50));
            assertTrue(System.nanoTime() - t0 >= 40_000_000L, "returned before its timeout");
        } finally {
            NativeUdp.close(rx);
        }
    }

    @Test
    void aPortInUseIsRefusedWithItsErrno() {
        int a = NativeUdp.open(LOOPBACK, 0, 0, 0, false);
        try {
            int port = NativeUdp.localPort(a);
            UncheckedIOException e = assertThrows(UncheckedIOException.class,
                    () -> NativeUdp.open(LOOPBACK, port, 0, 0, false));
            assertTrue(e.getMessage().contains("127.0.0.1:" + port) && e.getMessage().contains("Address already in use")
                    && e.getMessage().contains("errno"), e.getMessage());
        } finally {
            NativeUdp.close(a);
        }
    }
}
