package io.netreduce.verbs.soft;

import io.netreduce.verbs.Counters;
import io.netreduce.wire.roce.PcapWriter;
import io.netreduce.wire.udp.GsoLimits;
import io.netreduce.wire.udp.NativeUdp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Egress} through the native batched send: batches are built one after another in
 * one direct arena per queue pair, each queued as a run of a send plan, and {@link #send()}
 * hands the whole plan to one {@code sendmmsg} (every run of several packets one GSO
 * super-datagram), gathered straight from the arena: no buffer per batch, no copy after the
 * packet is built. A full arena or plan is sent early. What the socket does not take within
 * {@link #SEND_WAIT_MILLIS} is lost as on a wire, and RC's retransmission recovers it.
 */
final class NativeEgress extends Egress {
    /** Room for several windows of GSO batches. */
    static final int ARENA_BYTES = 1 << 20;
    static final int SEND_WAIT_MILLIS = 10;
    private static final int PLAN_INTS = 4 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(NativeEgress.class);

    private final int fd;
    private final int hopIp;
    private final int hopPort;
    private final ByteBuffer arena = ByteBuffer.allocateDirect(ARENA_BYTES);
    private final IntBuffer plan = ByteBuffer.allocateDirect(4 * PLAN_INTS).order(ByteOrder.nativeOrder()).asIntBuffer();
    private int used;
    private int runs;
    private int heldStart = -1;
    private int heldLength;

    NativeEgress(int fd, int hopIp, int hopPort, int srcIp, int srcPort, int dstIp, int dstPort, boolean gso,
                 FaultInjector faults, PcapWriter pcap, Counters counters, Counters deviceCounters) {
        super(srcIp, srcPort, dstIp, dstPort, gso, faults, pcap, counters, deviceCounters);
        this.fd = fd;
        this.hopIp = hopIp;
        this.hopPort = hopPort;
        for (int i = 0; i < ARENA_BYTES; i += 4096) {
            arena.put(i, (byte) 0); // fresh pages cost 11-14 us each at first touch: not on the data path
        }
    }

    @Override
    protected void openBatch(int capacity) {
        if (used + capacity > ARENA_BYTES || plan.remaining() < 4 + 2 * GsoLimits.MAX_SEGMENTS + 8) {
            send();
        }
        view = arena;
        batchStart = used;
    }

    @Override
    protected void abandonBatch() {
        // nothing was taken from the arena
    }

    @Override
    protected void queueBatch() {
        run(batchStart, segmentLength, segments, batchBytes());
        consume();
    }

    private void run(int start, int segment, int count, int bytes) {
        plan.put(hopIp).put(hopPort).put(count > 1 ? segment : 0).put(count);
        for (int k = 0; k < count; k++) {
            plan.put(start + k * segment).put(Math.min(segment, bytes - k * segment));
        }
        runs++;
    }

    /** Takes the open batch's bytes from the arena (whatever becomes of them). */
    private void consume() {
        used = (batchStart + batchBytes() + 63) & ~63;
    }

    @Override
    protected void flipByte(int index) {
        int i = batchStart + index;
        arena.put(i, (byte) (arena.get(i) ^ 0x5A));
    }

    @Override
    protected void queueCopy() {
        run(batchStart, batchBytes(), 1, batchBytes());
    }

    @Override
    protected void holdBack() {
        consume();
        heldStart = batchStart;
        heldLength = batchBytes();
    }

    @Override
    protected void releaseHeldBack() {
        if (heldStart >= 0) {
            run(heldStart, heldLength, 1, heldLength);
            heldStart = -1;
        }
    }

    @Override
    protected boolean hasHeldBack() {
        return heldStart >= 0;
    }

    @Override
    protected void send() {
        releaseHeldBack();
        if (runs > 0) {
            int sent = NativeUdp.send(fd, arena, plan, runs, SEND_WAIT_MILLIS);
            if (sent < runs) {
                countUnsent(NativeUdp.datagramsFrom(plan, runs, Math.max(0, sent)));
                if (LOG.isDebugEnabled()) {
                    LOG.debug("soft egress: the socket took {} of {} batches ({}); RC retransmits the rest",
                            Math.max(0, sent), runs, sent < 0 ? NativeUdp.error(-sent) : "full");
                }
            }
        }
        plan.clear();
        runs = 0;
        used = 0;
    }

    @Override
    void discard() {
        view = null;
        plan.clear();
        runs = 0;
        used = 0;
        heldStart = -1;
    }
}
