package io.netreduce.verbs.soft;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Counters;
import io.netreduce.wire.roce.Icrc;
import io.netreduce.wire.roce.IcrcTemplate;
import io.netreduce.wire.roce.PcapWriter;
import io.netreduce.wire.udp.GsoLimits;
import java.nio.ByteBuffer;

/**
 * The outbound half of one queue pair: builds packets in direct buffers, seals them with the
 * ICRC of the canonical header between the two endpoints, and hands them to the queue pair's
 * own socket (its fixed UDP source port) addressed to the peer or gateway.
 *
 * <p>Consecutive packets of equal length share one batch and leave as a single UDP GSO
 * super-datagram (the kernel cuts it into datagrams; a shorter packet may close a batch).
 * Batches are queued without sending; {@link #flush()} ends a burst with one sendmmsg.
 * Injected loss and corruption apply per packet inside a batch (a lost packet's room is
 * taken by the next one), so a lossy run sends as a lossless one does and measures the loss
 * alone; injected duplicates or reordering make every packet travel alone.
 * Where batches live and how they reach the socket is the subclass's:
 * {@link NativeEgress} (one arena, the native batched send, no copy) or
 * {@link NettyEgress} (pooled buffers written to Netty's channel).
 *
 * <p>Usage: {@code int at = begin(len)}, fill {@code buffer()} at [at, at + len - 4),
 * then {@link #commit()}. Confined to whoever runs the device's protocol.
 */
abstract class Egress {
    private final int srcIp;
    private final int dstIp;
    private final int srcPort;
    private final int dstPort;
    private final boolean gso;
    private final FaultInjector faults;
    /** Faults that move packets (duplication, reordering): every packet is a batch of its own. */
    private final boolean faultsPerBatch;
    /** The fault flags {@link #commit()} drew for the packet of the open batch, applied when it closes. */
    private int moves;
    private final PcapWriter pcap;
    private final Counters counters;
    private final Counters deviceCounters;
    private final IcrcTemplate icrc = new IcrcTemplate();
    /** The masked canonical header between the two endpoints, built once: per packet only its lengths and the BTH change. */
    private final byte[] icrcTemplate;

    /** The open batch's buffer (null when none is open) and where the batch starts in it. */
    protected ByteBuffer view;
    protected int batchStart;
    protected int segmentLength;
    protected int segments;
    private int packetStart;
    private int packetLength;
    private boolean dirty;

    Egress(int srcIp, int srcPort, int dstIp, int dstPort, boolean gso, FaultInjector faults, PcapWriter pcap,
           Counters counters, Counters deviceCounters) {
        this.srcIp = srcIp;
        this.dstIp = dstIp;
        this.srcPort = srcPort;
        this.dstPort = dstPort;
        this.icrcTemplate = IcrcTemplate.template(srcIp, dstIp, srcPort, dstPort);
        this.faults = faults;
        this.faultsPerBatch = faults.active() && faults.movesPackets();
        this.gso = gso && !faultsPerBatch;
        this.pcap = pcap;
        this.counters = counters;
        this.deviceCounters = deviceCounters;
    }

    /** Reserves a packet of {@code length} bytes (BTH .. ICRC); returns its offset in {@link #buffer()}. */
    int begin(int length) {
        if (view != null) {
            int used = segments * segmentLength;
            if (length > segmentLength || !GsoLimits.fits(segments, used, length)) {
                closeBatch();
            }
        }
        if (view == null) {
            openBatch(gso ? Math.max(length, GsoLimits.MAX_BYTES) : length);
            segmentLength = length;
            segments = 0;
        }
        packetStart = batchStart + segments * segmentLength;
        packetLength = length;
        beginPacket(segments);
        return packetStart;
    }

    ByteBuffer buffer() {
        return view;
    }

    /** Seals the packet begun last (ICRC), taps it, and queues it for sending. */
    void commit() {
        icrc.write(icrcTemplate, view, packetStart, packetLength);
        if (pcap != null) {
            pcap.write(System.currentTimeMillis() * 1_000_000L, srcIp, dstIp, srcPort, dstPort, view, packetStart,
                    packetLength);
        }
        queuePacket();
    }

    /**
     * True if the packet begun next, with {@code payloadLength} bytes of payload, may leave its
     * payload where it lies ({@link #commitGathered}): the socket gathers it, so no fault may
     * change its bytes and no capture needs them in one piece.
     */
    boolean gathers(int payloadLength) {
        return false;
    }

    /**
     * Seals the packet begun last, of which the caller wrote the first {@code headerLength}
     * bytes into {@link #buffer()}, and whose payload is [{@code payloadOffset}, +{@code
     * payloadLength}) of the direct buffer {@code payload} (at native address {@code
     * payloadAddress}), where it stays until the packet is sent: the pad and the ICRC (over
     * the header and the payload in place) follow the header in {@link #buffer()}. Only where
     * {@link #gathers(int)}.
     */
    void commitGathered(int headerLength, ByteBuffer payload, long payloadAddress, int payloadOffset,
                        int payloadLength) {
        int pad = packetLength - headerLength - payloadLength - Icrc.LENGTH;
        int trailer = packetStart + headerLength;
        for (int i = 0; i < pad; i++) {
            view.put(trailer + i, (byte) 0);
        }
        int value = icrc.computeGathered(icrcTemplate, view, packetStart, headerLength, payload, payloadOffset,
                payloadLength, pad);
        Icrc.store(view, trailer + pad, value);
        gathered(segments, headerLength, payloadAddress + payloadOffset, payloadLength);
        counters.increment(Counter.PAYLOADS_GATHERED);
        queuePacket();
    }

    /** Packet {@code index} of the open batch begins (copied in, unless {@link #gathered} says otherwise). */
    protected void beginPacket(int index) {
    }

    /**
     * Notes that packet {@code index} of the open batch is its {@code headerLength} bytes in
     * the batch, then the payload by reference, then the pad and ICRC right after the header.
     */
    protected void gathered(int index, int headerLength, long payloadAddress, int payloadLength) {
        throw new UnsupportedOperationException("this egress copies every packet");
    }

    /** Counts the packet just sealed, applies injected faults, and adds it to its batch. */
    private void queuePacket() {
        counters.increment(Counter.PACKETS_SENT);
        counters.add(Counter.BYTES_SENT, packetLength);
        if (faults.active()) {
            int f = faults.decide();
            if (!injectInPlace(f)) {
                return;
            }
            moves = f; // duplication and reordering happen when the packet's batch (of one) closes
        }
        segments++;
        dirty = true;
        if (!gso || packetLength < segmentLength) {
            closeBatch();
        }
    }

    /** True if this egress may gather payloads: no capture, and no fault that changes or moves a packet. */
    protected boolean payloadsMayStayInPlace() {
        return pcap == null && (!faults.active() || faults.onlyDrops());
    }

    /** Bytes of the open batch so far. */
    protected int batchBytes() {
        return packetStart + packetLength - batchStart;
    }

    private void closeBatch() {
        if (view == null) {
            return;
        }
        if (segments == 0) {
            abandonBatch();
        } else if (faultsPerBatch) {
            move(moves);
        } else {
            queueBatch();
        }
        view = null;
    }

    /** Opens a batch of up to {@code capacity} bytes: sets {@link #view} and {@link #batchStart}. */
    protected abstract void openBatch(int capacity);

    /** Gives back the open batch, which holds no packet. */
    protected abstract void abandonBatch();

    /** Queues the open batch: {@link #segments} packets of {@link #segmentLength} (the last may be shorter). */
    protected abstract void queueBatch();

    /**
     * The open batch's one packet (faults that move packets make every packet a batch of its
     * own) under the injected fault flags {@code f}: sent twice, or held back to go after the
     * next one.
     */
    private void move(int f) {
        if ((f & FaultInjector.DUPLICATE) != 0) {
            count(Counter.INJECTED_DUPLICATES);
            queueCopy();
        }
        if ((f & FaultInjector.REORDER) != 0 && !hasHeldBack()) {
            count(Counter.INJECTED_REORDERS);
            holdBack();
            return;
        }
        queueBatch();
        releaseHeldBack();
    }

    /**
     * Loss or corruption {@code f} of the packet just sealed, where it lies in its batch;
     * false when it is lost (not counted in the batch: the next packet takes its room).
     */
    private boolean injectInPlace(int f) {
        if ((f & FaultInjector.DROP) != 0) {
            count(Counter.INJECTED_LOSS);
            return false;
        }
        if ((f & FaultInjector.CORRUPT) != 0) {
            count(Counter.INJECTED_CORRUPTIONS);
            flipByte(packetStart - batchStart + faults.corruptIndex(packetLength));
        }
        return true;
    }

    /** Flips byte {@code index} of the open batch (injected corruption). */
    protected abstract void flipByte(int index);

    /** Queues a copy of the open batch's packet, the batch itself still open (injected duplicate). */
    protected abstract void queueCopy();

    /** Keeps the open batch's packet back, to be queued after the next one (injected reordering). */
    protected abstract void holdBack();

    /** Queues the packet held back, if any. */
    protected abstract void releaseHeldBack();

    /** Sends everything queued, a held-back packet last. */
    protected abstract void send();

    /** Counts {@code packets} the socket did not take, on the queue pair and the device. */
    protected void countUnsent(int packets) {
        counters.add(Counter.DROP_SEND_BUFFER_FULL, packets);
        deviceCounters.add(Counter.DROP_SEND_BUFFER_FULL, packets);
    }

    /** Counts an injected fault on the queue pair and the device. */
    private void count(Counter c) {
        counters.increment(c);
        deviceCounters.increment(c);
    }

    /** Sends everything queued (one sendmmsg where possible). A held-back packet goes last. */
    void flush() {
        closeBatch();
        if (dirty || hasHeldBack()) {
            dirty = false;
            send();
        }
    }

    protected abstract boolean hasHeldBack();

    /** Drops anything not yet sent (queue pair closing). */
    abstract void discard();
}
