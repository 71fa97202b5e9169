package io.netreduce.verbs.soft;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Counters;
import io.netreduce.wire.udp.GsoLimits;
import io.netreduce.wire.roce.Icrc;
import io.netreduce.wire.roce.PcapWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.SegmentedDatagramPacket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * The outbound half of one queue pair: builds packets in pooled direct buffers, seals them
 * with the ICRC of the canonical header between the two endpoints, and hands them to the
 * queue pair's own socket (its fixed UDP source port) addressed to the peer or gateway.
 *
 * <p>Consecutive packets of equal length share one buffer and leave as a single UDP GSO
 * super-datagram (the kernel cuts it into datagrams; a shorter packet may close a batch).
 * Packets are written without flushing; {@link #flush()} ends a burst with one sendmmsg.
 * With egress faults active every packet travels alone so that faults apply per packet.
 *
 * <p>Usage: {@code int at = begin(len)}, fill {@code buffer()} at [at, at + len - 4),
 * then {@link #commit()}. Event-loop confined.
 */
final class Egress {
    private final Channel channel;
    private final ByteBufAllocator allocator;
    private final InetSocketAddress nextHop;
    private final int srcIp;
    private final int dstIp;
    private final int srcPort;
    private final int dstPort;
    private final boolean gso;
    private final FaultInjector faults;
    private final PcapWriter pcap;
    private final Counters counters;
    private final Counters deviceCounters;
    private final Icrc icrc = new Icrc();

    private ByteBuf batch;
    private ByteBuffer view;
    private int segmentLength;
    private int segments;
    private int packetStart;
    private int packetLength;
    private ByteBuf heldBack;
    private boolean dirty;

    Egress(Channel channel, ByteBufAllocator allocator, InetSocketAddress nextHop, int srcIp, int srcPort,
           int dstIp, int dstPort, boolean gso, FaultInjector faults, PcapWriter pcap, Counters counters,
           Counters deviceCounters) {
        this.channel = channel;
        this.allocator = allocator;
        this.nextHop = nextHop;
        this.srcIp = srcIp;
        this.dstIp = dstIp;
        this.srcPort = srcPort;
        this.dstPort = dstPort;
        this.faults = faults;
        this.gso = gso && !faults.active();
        this.pcap = pcap;
        this.counters = counters;
        this.deviceCounters = deviceCounters;
    }

    /** Reserves a packet of {@code length} bytes (BTH .. ICRC); returns its offset in {@link #buffer()}. */
    int begin(int length) {
        if (batch != null) {
            int used = segments * segmentLength;
            if (length > segmentLength || !GsoLimits.fits(segments, used, length)) {
                closeBatch();
            }
        }
        if (batch == null) {
            int capacity = gso ? Math.max(length, GsoLimits.MAX_BYTES) : length;
            batch = allocator.directBuffer(capacity, capacity);
            view = batch.nioBuffer(0, capacity);
            segmentLength = length;
            segments = 0;
        }
        packetStart = segments * segmentLength;
        packetLength = length;
        return packetStart;
    }

    ByteBuffer buffer() {
        return view;
    }

    /** Seals the packet begun last (ICRC), taps it, and queues it for sending. */
    void commit() {
        icrc.write(srcIp, dstIp, srcPort, dstPort, view, packetStart, packetLength);
        if (pcap != null) {
            pcap.write(System.currentTimeMillis() * 1_000_000L, srcIp, dstIp, srcPort, dstPort, view, packetStart,
                    packetLength);
        }
        counters.increment(Counter.PACKETS_SENT);
        counters.add(Counter.BYTES_SENT, packetLength);
        segments++;
        batch.writerIndex(packetStart + packetLength);
        dirty = true;
        if (!gso || packetLength < segmentLength) {
            closeBatch();
        }
    }

    private void closeBatch() {
        if (batch == null) {
            return;
        }
        ByteBuf b = batch;
        int n = segments;
        int seg = segmentLength;
        batch = null;
        view = null;
        if (n == 0) {
            b.release();
            return;
        }
        if (faults.active()) {
            inject(b);
        } else if (n == 1) {
            channel.write(new DatagramPacket(b, nextHop), channel.voidPromise());
        } else {
            channel.write(new SegmentedDatagramPacket(b, seg, nextHop), channel.voidPromise());
        }
    }

    private void inject(ByteBuf packet) {
        int f = faults.decide();
        if ((f & FaultInjector.DROP) != 0) {
            count(Counter.INJECTED_LOSS);
            packet.release();
            return;
        }
        if ((f & FaultInjector.CORRUPT) != 0) {
            count(Counter.INJECTED_CORRUPTIONS);
            int i = faults.corruptIndex(packet.readableBytes());
            packet.setByte(i, packet.getByte(i) ^ 0x5A);
        }
        if ((f & FaultInjector.DUPLICATE) != 0) {
            count(Counter.INJECTED_DUPLICATES);
            channel.write(new DatagramPacket(packet.retainedDuplicate(), nextHop), channel.voidPromise());
        }
        if ((f & FaultInjector.REORDER) != 0 && heldBack == null) {
            count(Counter.INJECTED_REORDERS);
            heldBack = packet;
            return;
        }
        channel.write(new DatagramPacket(packet, nextHop), channel.voidPromise());
        releaseHeldBack();
    }

    private void releaseHeldBack() {
        if (heldBack != null) {
            ByteBuf h = heldBack;
            heldBack = null;
            channel.write(new DatagramPacket(h, nextHop), channel.voidPromise());
        }
    }

    private void count(Counter c) {
        counters.increment(c);
        deviceCounters.increment(c);
    }

    /** Sends everything queued (one sendmmsg where possible). A held-back packet goes last. */
    void flush() {
        if (!dirty && heldBack == null) {
            return;
        }
        closeBatch();
        releaseHeldBack();
        dirty = false;
        channel.flush();
    }

    /** Drops anything not yet sent (queue pair closing). */
    void discard() {
        if (batch != null) {
            batch.release();
            batch = null;
            view = null;
        }
        if (heldBack != null) {
            heldBack.release();
            heldBack = null;
        }
    }
}
