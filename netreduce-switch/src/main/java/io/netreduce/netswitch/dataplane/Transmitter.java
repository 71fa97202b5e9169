package io.netreduce.netswitch.dataplane;


import io.netreduce.netswitch.engine.DropReason;
import io.netreduce.netswitch.engine.OutputBatch;
import io.netreduce.netswitch.engine.SwitchCounters;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.SegmentedDatagramPacket;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands the engine's output to the switch's Netty channel in batches: {@link #queue} writes
 * the datagrams of an {@link OutputBatch} to the channel without flushing, {@link #flush()}
 * sends everything queued with one {@code sendmmsg} (Netty's epoll transport writes all
 * pending datagram messages in one call).
 *
 * <p>The datagrams go in {@link DestinationRuns}: with UDP GSO, each run leaves as a single
 * super-datagram which the kernel cuts into datagrams (and a receiver with GRO takes in
 * one read). Each run is copied once into a pooled direct buffer: the output batch is reused
 * at once, while Netty may keep a write pending until the socket has room; the copy costs
 * far less than the system call it saves.
 *
 * <p>Nothing grows with input: when the channel's pending bytes pass its high water mark,
 * output is dropped and counted as {@code send_failed}. Data-plane thread only.
 */
final class Transmitter {

    private static final Logger LOG = LoggerFactory.getLogger(Transmitter.class);

    private final Channel channel;
    private final ByteBufAllocator allocator;
    private final SwitchCounters counters;
    private final DestinationCache destinations = new DestinationCache();
    private final DestinationRuns runs;
    private final DestinationRuns.Sink sink = this::send;
    private boolean dirty;
    private volatile long writes;
    /** Counts a write the kernel refused (a GSO run counts once: the packets are not known here). */
    private final ChannelFutureListener onWritten;

    /** @param gso send runs of equal-length packets to one destination as UDP GSO super-datagrams */
    Transmitter(Channel channel, ByteBufAllocator allocator, SwitchCounters counters, boolean gso) {
        this.channel = channel;
        this.allocator = allocator;
        this.counters = counters;
        this.runs = new DestinationRuns(gso);
        this.onWritten = f -> {
            if (!f.isSuccess()) {
                counters.recordDrop(DropReason.SEND_FAILED);
                LOG.debug("switch data plane: a write failed: {}", f.cause().toString());
            }
        };
    }

    /** Writes (without flushing) every datagram of {@code out}, then clears it. */
    void queue(OutputBatch out) {
        if (out.size() > 0) {
            runs.cut(out, sink);
            out.clear();
        }
    }

    private void send(OutputBatch out, int[] run, int runLength, int segment, int bytes, int ip, int port) {
        InetSocketAddress to = destinations.get(ip, port);
        if (!channel.isWritable()) {
            // The socket has not taken what was written before: drop rather than queue without bound.
            counters.recordDrops(DropReason.SEND_FAILED, runLength);
            return;
        }
        ByteBuf buf = allocator.directBuffer(bytes, bytes);
        for (int k = 0; k < runLength; k++) {
            int i = run[k];
            ByteBuffer b = out.buffer(i);
            b.limit(out.length(i)).position(0);
            buf.writeBytes(b);
            b.clear();
        }
        DatagramPacket packet = runLength == 1 ? new DatagramPacket(buf, to) : new SegmentedDatagramPacket(buf, segment, to);
        channel.write(packet, channel.newPromise().addListener(onWritten));
        dirty = true;
        writes = writes + 1; // event loop only; volatile for the log at close
    }

    /** Datagrams or GSO super-datagrams written so far. */
    long writes() {
        return writes;
    }

    /** Sends everything queued since the last flush. */
    void flush() {
        if (dirty) {
            dirty = false;
            channel.flush();
        }
    }
}
