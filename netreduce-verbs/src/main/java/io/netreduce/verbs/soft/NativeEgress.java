package io.netreduce.verbs.soft;

import io.netreduce.verbs.Counters;
import io.netreduce.wire.roce.PcapWriter;
import io.netreduce.wire.udp.GsoLimits;
import io.netreduce.wire.udp.NativeUdp;
import io.netreduce.wire.udp.SendPlan;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Egress} through the native batched send: batches are built one after another in
 * one direct arena per queue pair, each queued as a run of a send plan, and {@link #send()}
 * hands the whole plan to one {@code sendmmsg} (every run of several packets one GSO
 * super-datagram): no buffer per batch, no copy after the packet is built. Where it
 * {@link #gathers(int) gathers}, a packet's payload is not copied into the arena at all: the
 * plan names it where it lies in registered memory, between the packet's headers and its
 * ICRC in the arena, and the kernel gathers the three (the requester keeps that memory
 * unchanged until the send, as a NIC reads it by DMA). A full arena or plan is sent early.
 * What the socket does not take within {@link #SEND_WAIT_MILLIS} is lost as on a wire, and
 * RC's retransmission recovers it.
 */
final class NativeEgress extends Egress {
    /** Room for several windows of GSO batches. */
    static final int ARENA_BYTES = 1 << 20;
    static final int SEND_WAIT_MILLIS = 10;
    private static final int PLAN_INTS = 16 * 1024;
    private static final Logger LOG = LoggerFactory.getLogger(NativeEgress.class);

    private final int fd;
    private final int hopIp;
    private final int hopPort;
    private final ByteBuffer arena = ByteBuffer.allocateDirect(ARENA_BYTES);
    private final long arenaAddress = NativeUdp.address(arena);
    private final SendPlan plan = new SendPlan(PLAN_INTS);
    /** The least payload left in place; above any payload where captures or faults need the packet whole. */
    private final int gatherMinBytes;
    /** Per packet of the open batch: its header length if its payload stays in place (else 0), and where that payload is. */
    private final int[] headerLengths = new int[GsoLimits.MAX_SEGMENTS];
    private final long[] payloadAddresses = new long[GsoLimits.MAX_SEGMENTS];
    private final int[] payloadLengths = new int[GsoLimits.MAX_SEGMENTS];
    private int used;
    private int heldStart = -1;
    private int heldLength;

    NativeEgress(int fd, int hopIp, int hopPort, int srcIp, int srcPort, int dstIp, int dstPort, boolean gso,
                 int gatherMinBytes, FaultInjector faults, PcapWriter pcap, Counters counters, Counters deviceCounters) {
        super(srcIp, srcPort, dstIp, dstPort, gso, faults, pcap, counters, deviceCounters);
        this.fd = fd;
        this.hopIp = hopIp;
        this.hopPort = hopPort;
        this.gatherMinBytes = payloadsMayStayInPlace() ? gatherMinBytes : Integer.MAX_VALUE;
        for (int i = 0; i < ARENA_BYTES; i += 4096) {
            arena.put(i, (byte) 0); // fresh pages cost 11-14 us each at first touch: not on the data path
        }
    }

    @Override
    boolean gathers(int payloadLength) {
        return payloadLength >= gatherMinBytes;
    }

    @Override
    protected void gathered(int index, int headerLength, long payloadAddress, int payloadLength) {
        headerLengths[index] = headerLength;
        payloadAddresses[index] = payloadAddress;
        payloadLengths[index] = payloadLength;
    }

    @Override
    protected void openBatch(int capacity) {
        // Room for the batch's run and, if need be, a held-back packet's.
        if (used + capacity > ARENA_BYTES || !plan.hasRoom(3 * GsoLimits.MAX_SEGMENTS + 2)) {
            send();
        }
        view = arena;
        batchStart = used;
    }

    @Override
    protected void beginPacket(int index) {
        headerLengths[index] = 0;
    }

    @Override
    protected void abandonBatch() {
        // nothing was taken from the arena
    }

    @Override
    protected void queueBatch() {
        plan.beginRun(hopIp, hopPort, segmentLength);
        long at = arenaAddress + batchStart;
        int bytes = batchBytes();
        for (int k = 0; k < segments; k++) {
            int length = Math.min(segmentLength, bytes - k * segmentLength);
            plan.packet(at + (long) k * segmentLength, length, headerLengths[k], payloadAddresses[k], payloadLengths[k]);
        }
        plan.endRun(segments);
        consume();
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
        plan.contiguousRun(hopIp, hopPort, arenaAddress + batchStart, batchBytes(), 1, batchBytes());
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
            plan.contiguousRun(hopIp, hopPort, arenaAddress + heldStart, heldLength, 1, heldLength);
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
        int runs = plan.runs();
        if (runs > 0) {
            int sent = plan.send(fd, SEND_WAIT_MILLIS);
            if (sent < runs) {
                countUnsent(plan.datagramsFrom(Math.max(0, sent)));
                if (LOG.isDebugEnabled()) {
                    LOG.debug("soft egress: the socket took {} of {} batches ({}); RC retransmits the rest",
                            Math.max(0, sent), runs, sent < 0 ? NativeUdp.error(-sent) : "full");
                }
            }
        }
        plan.clear();
        used = 0;
    }

    @Override
    void discard() {
        view = null;
        plan.clear();
        used = 0;
        heldStart = -1;
    }
}
