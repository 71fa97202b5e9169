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
import java.util.concurrent.atomic.AtomicInteger;
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
            long base = NativeUdp.address(out);
            // Run 1: ten segments of 1000 bytes (the last 700), taken from the buffer in reverse order.
            SendPlan plan = new SendPlan(256);
            plan.beginRun(LOOPBACK, rxPort, 1000);
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            for (int k = 0; k < 9; k++) {
                plan.iovec(base + (9 - k) * 1000, 1000);
                expected.write(bytes, (9 - k) * 1000, 1000);
            }
            plan.iovec(base, 700);
            expected.write(bytes, 0, 700);
            plan.endRun(10);
            // Run 2: one datagram of 300 bytes.
            plan.contiguousRun(LOOPBACK, rxPort, base + 10_000, 300, 1, 300);
            expected.write(bytes, 10_000, 300);
            assertEquals(2, plan.runs());
            assertEquals(11, plan.datagramsFrom(0));
            assertEquals(1, plan.datagramsFrom(1));
            assertEquals(2, plan.send(tx, 100));

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
    void aRunGathersEachDatagramFromSeveralBuffers() {
        int rx = NativeUdp.open(LOOPBACK, 0, 1 << 20, 1 << 20, true);
        int tx = NativeUdp.open(LOOPBACK, 0, 1 << 20, 1 << 20, false);
        try {
            int rxPort = NativeUdp.localPort(rx);
            long seed = 11;
            Random random = new Random(seed);
            // Each datagram: a 12-byte header and a 4-byte trailer from one buffer, 984 bytes of payload from another.
            int packets = 8;
            byte[] small = new byte[16 * packets];
            byte[] payload = new byte[984 * packets];
            random.nextBytes(small);
            random.nextBytes(payload);
            ByteBuffer smallBuffer = ByteBuffer.allocateDirect(small.length).put(0, small);
            ByteBuffer payloadBuffer = ByteBuffer.allocateDirect(payload.length).put(0, payload);
            long s = NativeUdp.address(smallBuffer);
            long p = NativeUdp.address(payloadBuffer);
            SendPlan plan = new SendPlan(256);
            plan.beginRun(LOOPBACK, rxPort, 1000);
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            for (int k = 0; k < packets; k++) {
                // header k directly after trailer k - 1: the two merge into one iovec
                plan.iovec(s + 16 * k, 12);
                plan.iovec(p + 984 * k, 984);
                plan.iovec(s + 16 * k + 12, 4);
                expected.write(small, 16 * k, 12);
                expected.write(payload, 984 * k, 984);
                expected.write(small, 16 * k + 12, 4);
            }
            plan.endRun(packets);
            assertEquals(1, plan.send(tx, 100));

            ByteBuffer in = ByteBuffer.allocateDirect(65_536);
            IntBuffer meta = ints(NativeUdp.META_INTS * packets);
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (got.size() < expected.size() && System.nanoTime() < deadline) {
                int n = NativeUdp.receive(rx, in, 8192, packets, meta, 1000);
                assertTrue(n >= 0, "errno " + -n);
                for (int i = 0; i < n; i++) {
                    int length = meta.get(NativeUdp.META_INTS * i);
                    int segment = meta.get(NativeUdp.META_INTS * i + 3);
                    assertTrue(segment == 1000, "segment " + segment + " of " + length);
                    byte[] b = new byte[length];
                    in.get(i * 8192, b);
                    got.writeBytes(b);
                }
            }
            assertArrayEquals(expected.toByteArray(), got.toByteArray(), "seed " + seed);
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

    /**
     * A receive that waits sleeps in the receive itself, bounded by a socket timeout it sets
     * when its own differs: a datagram sent while it sleeps ends the wait at once, a shorter
     * timeout after a longer one holds, and a socket opened on a descriptor that a closed one
     * with a timeout had gets its own (a stale one would make this test hang until @Timeout).
     */
    @Test
    void aWaitingReceiveEndsAtTheFirstDatagramAndEachCallsTimeoutHolds() throws Exception {
        int rx = NativeUdp.open(LOOPBACK, 0, 0, 0, false);
        int tx = NativeUdp.open(LOOPBACK, 0, 0, 0, false);
        ByteBuffer in = ByteBuffer.allocateDirect(4 * 2048);
        IntBuffer meta = ints(4 * NativeUdp.META_INTS);
        try {
            int rxPort = NativeUdp.localPort(rx);
            ByteBuffer out = ByteBuffer.allocateDirect(64);
            for (int i = 0; i < 64; i++) {
                out.put(i, (byte) i);
            }
            SendPlan plan = new SendPlan(64);
            plan.contiguousRun(LOOPBACK, rxPort, NativeUdp.address(out), 64, 1, 64);
            AtomicInteger sent = new AtomicInteger(-1);
            Thread sender = new Thread(() -> {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
                sent.set(plan.send(tx, 100));
            });
            long t0 = System.nanoTime();
            sender.start();
            int n = NativeUdp.receive(rx, in, 2048, 4, meta, 20_000);
            long waited = System.nanoTime() - t0;
            sender.join();
            assertEquals(1, sent.get(), "the sender's run");
            assertEquals(1, n, "one datagram");
            assertEquals(64, meta.get(0));
            assertEquals(NativeUdp.localPort(tx), meta.get(2));
            for (int i = 0; i < 64; i++) {
                assertEquals((byte) i, in.get(i));
            }
            assertTrue(waited < 10_000_000_000L, "the wait did not end at the datagram: " + waited / 1_000_000 + " ms");

            long t1 = System.nanoTime();
            assertEquals(0, NativeUdp.receive(rx, in, 2048, 4, meta, 50));
            long shortWait = System.nanoTime() - t1;
            assertTrue(shortWait >= 40_000_000L && shortWait < 10_000_000_000L,
                    "a 50 ms wait after a 20 s one took " + shortWait / 1_000_000 + " ms");
        } finally {
            NativeUdp.close(rx);
        }
        // The lowest free descriptor is the one just closed: a new socket on it must wait its own
        // 50 ms. A datagram 3 s later ends the wait of one that inherited none and would sleep for good.
        int again = NativeUdp.open(LOOPBACK, 0, 0, 0, false);
        SendPlan rescue = new SendPlan(64);
        rescue.contiguousRun(LOOPBACK, NativeUdp.localPort(again), NativeUdp.address(in), 16, 1, 16);
        Thread late = new Thread(() -> {
            try {
                Thread.sleep(3_000);
            } catch (InterruptedException e) {
                return;
            }
            rescue.send(tx, 100);
        });
        try {
            late.start();
            long t2 = System.nanoTime();
            int n = NativeUdp.receive(again, in, 2048, 4, meta, 50);
            long waited = System.nanoTime() - t2;
            late.interrupt();
            late.join();
            assertEquals(0, n, "a new socket on a reused descriptor waited " + waited / 1_000_000 + " ms, not its 50");
            assertTrue(waited >= 40_000_000L, "returned before its timeout");
        } finally {
            NativeUdp.close(again);
            NativeUdp.close(tx);
        }
    }

    /**
     * A receive buffer asked for past net.core.rmem_max: granted whole where the process may
     * force it (CAP_NET_ADMIN), else exactly as far as rmem_max allows, never less.
     */
    @Test
    void aReceiveBufferGrowsPastRmemMaxWhereAllowedAndElseToIt() throws Exception {
        int rmemMax = Integer.parseInt(java.nio.file.Files.readString(
                java.nio.file.Path.of("/proc/sys/net/core/rmem_max")).trim());
        int asked = Math.max(rmemMax, 1 << 20) + (3 << 20);
        int fd = NativeUdp.open(LOOPBACK, 0, 0, 0, false);
        try {
            int granted = NativeUdp.growReceiveBuffer(fd, asked);
            assertTrue(granted == asked || granted == rmemMax, "asked " + asked + ", rmem_max " + rmemMax
                    + ", granted " + granted);
        } finally {
            NativeUdp.close(fd);
        }
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> NativeUdp.growReceiveBuffer(-1, asked));
        assertTrue(e.getMessage().contains("errno"), e.getMessage());
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

    @Test
    void floatAddsAreTheJvmsAddsBitForBitAtEveryLengthAndAlignment() {
        // Bit for bit, except which payload a sum of two NaNs carries: IEEE 754 leaves it open,
        // and compilers (the JIT and gcc alike) may swap the operands of an addition.
        long seed = System.nanoTime();
        System.out.println("NativeUdpTest addFloats3 seed " + seed);
        Random rnd = new Random(seed);
        int n = 4096;
        ByteBuffer a = ByteBuffer.allocateDirect(4 * n + 64).order(ByteOrder.nativeOrder());
        ByteBuffer b = ByteBuffer.allocateDirect(4 * n + 64).order(ByteOrder.nativeOrder());
        ByteBuffer d = ByteBuffer.allocateDirect(4 * n + 64).order(ByteOrder.nativeOrder());
        // random bit patterns: NaNs with payloads, infinities, subnormals and signed zeros among them
        float[] special = {Float.NaN, Float.intBitsToFloat(0x7fc01234), Float.intBitsToFloat(0xffa00001),
                Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MIN_VALUE, -Float.MIN_VALUE, 0f, -0f,
                Float.MAX_VALUE};
        for (int i = 0; i < n + 16; i++) {
            a.putFloat(4 * i, rnd.nextInt(8) == 0 ? special[rnd.nextInt(special.length)] : Float.intBitsToFloat(rnd.nextInt()));
            b.putFloat(4 * i, rnd.nextInt(8) == 0 ? special[rnd.nextInt(special.length)] : Float.intBitsToFloat(rnd.nextInt()));
        }
        for (int trial = 0; trial < 400; trial++) {
            // every count up to 100 (short runs, the vector loop and its tail), then random ones
            int count = trial < 100 ? trial : rnd.nextInt(n - 16);
            int ia = rnd.nextInt(16), ib = rnd.nextInt(16), id = rnd.nextInt(16);
            d.clear();
            for (int i = 0; i < n + 16; i++) {
                d.putFloat(4 * i, 12345f);
            }
            NativeUdp.addFloats3(NativeUdp.address(d) + 4L * id, NativeUdp.address(a) + 4L * ia,
                    NativeUdp.address(b) + 4L * ib, count);
            for (int i = 0; i < n + 16; i++) {
                int k = i - id;
                boolean summed = k >= 0 && k < count;
                float x = summed ? a.getFloat(4 * (ia + k)) : 0f;
                float y = summed ? b.getFloat(4 * (ib + k)) : 0f;
                float got = d.getFloat(4 * i);
                String where = "element " + i + ", count " + count + ", offsets " + ia + "/" + ib + "/" + id
                        + " (seed " + seed + ")";
                if (summed && Float.isNaN(x) && Float.isNaN(y)) {
                    assertTrue(Float.isNaN(got), where);
                } else {
                    assertEquals(Float.floatToRawIntBits(summed ? x + y : 12345f), Float.floatToRawIntBits(got), where);
                }
            }
        }
    }

    @Test
    void crc32EqualsTheJdksOverEveryLengthAlignmentAndSplit() {
        long seed = System.nanoTime();
        int widest = NativeUdp.crc32Folds();
        System.out.println("NativeUdpTest crc32 seed " + seed + ", widest fold " + widest + " (" + NativeUdp.describe() + ")");
        Random rnd = new Random(seed);
        byte[] bytes = new byte[9000];
        rnd.nextBytes(bytes);
        ByteBuffer mem = ByteBuffer.allocateDirect(bytes.length).put(0, bytes);
        long base = NativeUdp.address(mem);
        java.util.zip.CRC32 jdk = new java.util.zip.CRC32();
        for (int trial = 0; trial < 3000; trial++) {
            // every length up to 600 (table tail, the 64- and 256-byte folds' edges), then random ones up to 8 KiB
            int length = trial < 600 ? trial : rnd.nextInt(8192);
            int at = rnd.nextInt(bytes.length - length + 1);
            int split = rnd.nextInt(length + 1);
            jdk.reset();
            // both continue from the CRC of a random prefix (0 to 63 bytes)
            int prefix = rnd.nextInt(64);
            jdk.update(bytes, bytes.length - prefix, prefix);
            int from = (int) jdk.getValue();
            jdk.update(bytes, at, length);
            String where = "length " + length + " at " + at + " split " + split + " (seed " + seed + ")";
            assertEquals((int) jdk.getValue(), NativeUdp.crc32(from, base + at, split, base + at + split, length - split),
                    where);
            // and every narrower fold this CPU can run, which the default call never takes here
            for (int folds = 0; folds < widest; folds++) {
                assertEquals((int) jdk.getValue(),
                        NativeUdp.crc32Narrowed(folds, from, base + at, split, base + at + split, length - split),
                        where + ", folds " + folds);
            }
        }
    }

    @Test
    void theAddressCacheAnswersEachBufferWithItsOwnAddressWhateverTheOrder() {
        long seed = System.nanoTime();
        System.out.println("NativeUdpTest address cache seed " + seed);
        Random rnd = new Random(seed);
        // more buffers than the cache holds, and slices (same memory, other addresses)
        ByteBuffer base = ByteBuffer.allocateDirect(1 << 12);
        ByteBuffer[] buffers = new ByteBuffer[7];
        for (int i = 0; i < buffers.length; i++) {
            buffers[i] = i < 4 ? ByteBuffer.allocateDirect(64) : base.slice(64 * i, 64);
        }
        AddressCache cache = new AddressCache();
        for (int n = 0; n < 2000; n++) {
            // runs of two or three buffers in turn, as a datapath asks, then any of them
            ByteBuffer b = buffers[n < 1000 ? (n % (2 + n / 500)) : rnd.nextInt(buffers.length)];
            assertEquals(NativeUdp.address(b), cache.of(b), "call " + n + " (seed " + seed + ")");
        }
        assertThrows(NullPointerException.class, () -> cache.of(null));
    }
}
