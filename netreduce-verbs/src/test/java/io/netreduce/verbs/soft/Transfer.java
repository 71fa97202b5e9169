package io.netreduce.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendOpcode;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Drives a one-way stream of messages from host A to host B of a {@link SoftPair} and
 * checks every byte: message i is a seeded-random size (0, 1, MTU-1, MTU, MTU+1, several
 * MTUs, up to {@code maxMessage}) taken from a seeded-random source region at a
 * seeded-random offset; every fifth is an RDMA WRITE with immediate into B's target
 * region, the rest are SENDs into B's posted receives. B's receive completions must arrive
 * in order with the right length, opcode and immediate, and the bytes must match.
 */
final class Transfer {
    final SoftPair pair;
    final long seed;
    final int maxMessage;
    long totalBytes;
    int receiveSlots = 64;
    int sendWindow = 48;
    /** Receives are not posted before this much time has passed (RNR path). */
    Duration recvDelay = Duration.ZERO;
    boolean useWrites = true;
    int messages;
    long bytes;

    Transfer(SoftPair pair, long seed, int maxMessage) {
        this.pair = pair;
        this.seed = seed;
        this.maxMessage = maxMessage;
    }

    private static int size(SplittableRandom r, int mtu, int max) {
        switch (r.nextInt(10)) {
            case 0: return 0;
            case 1: return 1;
            case 2: return mtu - 1;
            case 3: return mtu;
            case 4: return mtu + 1;
            case 5: return Math.min(max, mtu * (2 + r.nextInt(6)) + r.nextInt(4));
            default: return r.nextInt(max + 1);
        }
    }

    void run(long total, Duration deadline) throws InterruptedException {
        String ctx = "seed=" + seed;
        int mtu = pair.a.qp.mtu();
        int srcSize = 4 << 20;
        MemoryRegion src = pair.a.register(srcSize + maxMessage);
        ByteBuffer s = src.buffer();
        SplittableRandom fill = new SplittableRandom(seed ^ 0x5EED);
        for (int i = 0; i + 8 <= s.capacity(); i += 8) {
            s.putLong(i, fill.nextLong());
        }
        MemoryRegion recvMr = pair.b.register(receiveSlots * maxMessage);
        MemoryRegion writeMr = pair.b.register(receiveSlots * maxMessage);
        ByteBuffer rb = recvMr.buffer();
        ByteBuffer wb = writeMr.buffer();

        SplittableRandom sizes = new SplittableRandom(seed);
        // The receiver recomputes each message's description from the same seed.
        SplittableRandom expect = new SplittableRandom(seed);
        SendRequest sr = new SendRequest(1);
        RecvRequest rr = new RecvRequest(1);
        WorkCompletion[] wcs = new WorkCompletion[64];
        long start = System.nanoTime();
        long end = start + deadline.toNanos();
        long recvPostAfter = start + recvDelay.toNanos();
        long sent = 0;
        long sendDone = 0;
        long recvPosted = 0;
        long received = 0;
        long sentBytes = 0;
        boolean sending = true;
        while (sending || received < sent || sendDone < sent) {
            if (System.nanoTime() > end) {
                fail("transfer did not finish within " + deadline + " (" + ctx + "): sent " + sent + ", send-completed "
                        + sendDone + ", received " + received + "; A " + pair.a.qp.counters() + " B "
                        + pair.b.qp.counters());
            }
            boolean progress = false;
            long now = System.nanoTime();
            while (now >= recvPostAfter && recvPosted - received < receiveSlots) {
                int slot = (int) (recvPosted % receiveSlots);
                rr.reset().wrId(recvPosted).sgl().add(recvMr, slot * maxMessage, maxMessage);
                pair.b.qp.postRecv(rr);
                recvPosted++;
                progress = true;
            }
            while (sending && sent - sendDone < sendWindow && sent - received < receiveSlots) {
                int size = size(sizes, mtu, maxMessage);
                int off = sizes.nextInt(srcSize);
                boolean write = useWrites && sent % 5 == 3;
                sr.reset().wrId(sent).sgl();
                if (size > 0) {
                    sr.sgl().add(src, off, size);
                }
                if (write) {
                    int slot = (int) (sent % receiveSlots);
                    sr.opcode(SendOpcode.RDMA_WRITE_WITH_IMM).immediate((int) sent)
                            .remote(writeMr.address() + (long) slot * maxMessage, writeMr.rkey());
                } else if (sent % 7 == 1) {
                    sr.opcode(SendOpcode.SEND_WITH_IMM).immediate(~(int) sent);
                }
                pair.a.qp.postSend(sr);
                sent++;
                sentBytes += size;
                progress = true;
                if (sentBytes >= total) {
                    sending = false;
                }
            }
            int n = pair.a.sendCq.poll(wcs);
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs[i];
                assertEquals(WcStatus.SUCCESS, wc.status(), "send completion " + wc + " (" + ctx + "); A " + pair.a.qp.counters()
                        + ", B " + pair.b.qp.counters() + ", B device " + pair.b.device.counters());
                assertEquals(sendDone, wc.wrId(), "send completions in order (" + ctx + ")");
                sendDone++;
                progress = true;
            }
            n = pair.b.recvCq.poll(wcs);
            for (int i = 0; i < n; i++) {
                WorkCompletion wc = wcs[i];
                long k = received;
                assertEquals(WcStatus.SUCCESS, wc.status(), "receive completion " + wc + " (" + ctx + ")");
                assertEquals(k, wc.wrId(), "receive completions in order (" + ctx + ")");
                int size = size(expect, mtu, maxMessage);
                int off = expect.nextInt(srcSize);
                boolean write = useWrites && k % 5 == 3;
                int slot = (int) (k % receiveSlots);
                assertEquals(size, wc.byteLength(), "length of message " + k + " (" + ctx + ")");
                if (write) {
                    assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, wc.opcode(), "message " + k + " (" + ctx + ")");
                    assertTrue(wc.hasImmediate());
                    assertEquals((int) k, wc.immediate(), "immediate of message " + k + " (" + ctx + ")");
                    compare(s, off, wb, slot * maxMessage, size, k, ctx);
                } else {
                    assertEquals(WcOpcode.RECV, wc.opcode(), "message " + k + " (" + ctx + ")");
                    if (k % 7 == 1) {
                        assertTrue(wc.hasImmediate(), "message " + k + " carries an immediate (" + ctx + ")");
                        assertEquals(~(int) k, wc.immediate(), "immediate of message " + k + " (" + ctx + ")");
                    } else {
                        assertTrue(!wc.hasImmediate(), "message " + k + " has no immediate (" + ctx + ")");
                    }
                    compare(s, off, rb, slot * maxMessage, size, k, ctx);
                }
                bytes += size;
                received++;
                progress = true;
            }
            if (!progress) {
                LockSupport.parkNanos(20_000);
            }
        }
        messages = (int) received;
        assertEquals(sentBytes, bytes, "bytes delivered (" + ctx + ")");
    }

    private static void compare(ByteBuffer src, int srcOff, ByteBuffer dst, int dstOff, int size, long k, String ctx) {
        int mismatch = src.slice(srcOff, size).mismatch(dst.slice(dstOff, size));
        if (mismatch >= 0) {
            fail("message " + k + " of " + size + " bytes differs at byte " + mismatch + " (" + ctx + ")");
        }
    }
}
