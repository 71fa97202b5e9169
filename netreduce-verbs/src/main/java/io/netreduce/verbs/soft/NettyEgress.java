package io.netreduce.verbs.soft;

import io.netreduce.verbs.Counters;
import io.netreduce.wire.roce.PcapWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.SegmentedDatagramPacket;
import java.net.InetSocketAddress;

/**
 * {@link Egress} through the queue pair's Netty channel, where the native batched I/O is not
 * available: each batch is a pooled direct buffer written to the channel (a GSO
 * {@link SegmentedDatagramPacket} for several packets), and {@link #send()} flushes the
 * channel, which Netty turns into one sendmmsg.
 */
final class NettyEgress extends Egress {
    private final Channel channel;
    private final ByteBufAllocator allocator;
    private final InetSocketAddress nextHop;
    private ByteBuf batch;
    private ByteBuf heldBack;

    NettyEgress(Channel channel, ByteBufAllocator allocator, InetSocketAddress nextHop, int srcIp, int srcPort,
                int dstIp, int dstPort, boolean gso, FaultInjector faults, PcapWriter pcap, Counters counters,
                Counters deviceCounters) {
        super(srcIp, srcPort, dstIp, dstPort, gso, faults, pcap, counters, deviceCounters);
        this.channel = channel;
        this.allocator = allocator;
        this.nextHop = nextHop;
    }

    @Override
    protected void openBatch(int capacity) {
        batch = allocator.directBuffer(capacity, capacity);
        view = batch.nioBuffer(0, capacity);
        batchStart = 0;
    }

    @Override
    protected void abandonBatch() {
        batch.release();
        batch = null;
    }

    @Override
    protected void queueBatch() {
        ByteBuf b = take();
        channel.write(segments == 1 ? new DatagramPacket(b, nextHop) : new SegmentedDatagramPacket(b, segmentLength,
                nextHop), channel.voidPromise());
    }

    private ByteBuf take() {
        ByteBuf b = batch;
        batch = null;
        b.writerIndex(batchBytes());
        return b;
    }

    @Override
    protected void flipByte(int index) {
        batch.setByte(index, batch.getByte(index) ^ 0x5A);
    }

    @Override
    protected void queueCopy() {
        batch.writerIndex(batchBytes());
        channel.write(new DatagramPacket(batch.retainedDuplicate(), nextHop), channel.voidPromise());
    }

    @Override
    protected void holdBack() {
        heldBack = take();
    }

    @Override
    protected void releaseHeldBack() {
        if (heldBack != null) {
            ByteBuf h = heldBack;
            heldBack = null;
            channel.write(new DatagramPacket(h, nextHop), channel.voidPromise());
        }
    }

    @Override
    protected boolean hasHeldBack() {
        return heldBack != null;
    }

    @Override
    protected void send() {
        releaseHeldBack();
        channel.flush();
    }

    @Override
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
