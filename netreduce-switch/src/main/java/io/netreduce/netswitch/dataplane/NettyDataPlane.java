package io.netreduce.netswitch.dataplane;

import io.netreduce.netswitch.engine.AggregationEngine;
import io.netreduce.netswitch.engine.DropReason;
import io.netreduce.netswitch.engine.OutputBatch;
import io.netreduce.netswitch.engine.SwitchCounters;
import io.netreduce.wire.roce.Ipv4UdpHeader;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollMode;
import io.netty.channel.epoll.SegmentedDatagramPacket;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.util.concurrent.FastThreadLocalThread;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The switch's UDP port on Netty, where the native batched I/O is not available
 * ({@link DataPlane#open} chooses): one event-loop thread receives RoCEv2 datagrams on the
 * switch's address (port 4791), runs them through the {@link AggregationEngine} and sends
 * what it emits to the destination hosts.
 *
 * <p>I/O is batched through Netty's native epoll transport, as the soft provider does:
 * {@code recvmmsg} fills up to {@link #RX_BATCH} datagrams of a pooled direct buffer per
 * system call, the engine reads each in place (an NIO view of the pooled buffer, no copy),
 * its output collects in one preallocated {@link OutputBatch}, and at the end of each read
 * burst the {@link Transmitter} writes it grouped by destination (UDP GSO for runs to one
 * host) and flushes once ({@code sendmmsg}). The thread sleeps in epoll when idle. Where
 * epoll is unavailable (not Linux) the same pipeline runs on Netty's NIO transport, one
 * datagram per system call.
 *
 * <p>By default the socket does not enable UDP GRO: Netty reads GRO's segment size only on
 * its one-message {@code recvmsg} path, while {@code recvmmsg} batches whatever the senders
 * do (the kernel cuts a soft provider's GSO super-datagrams into datagrams on arrival).
 * {@link #GRO_PROPERTY} selects GRO; {@link #GSO_PROPERTY} turns GSO off (docs/switch.md
 * has the measurements behind the defaults).
 *
 * <p>Hostile input never stops the switch: the engine counts every bad datagram, anything
 * else a datagram could provoke is caught, logged and the loop goes on.
 */
final class NettyDataPlane implements DataPlane {
    /** Datagrams per {@code recvmmsg}. */
    static final int RX_BATCH = 64;
    /** A whole GRO super-datagram (at most 64 KiB). */
    private static final int GRO_BUFFER = 65_536;
    /** Receive slot per datagram: the largest datagram the engine accepts. */
    private static final int RX_SLOT = OutputBatch.MAX_DATAGRAM;
    private static final int SOCKET_BUFFER = 8 << 20;
    /** Output the socket has not taken yet beyond which the switch drops (bounded memory). */
    private static final WriteBufferWaterMark PENDING_OUTPUT = new WriteBufferWaterMark(4 << 20, 16 << 20);
    private static final long CLOSE_DEADLINE_MS = 5_000;
    private static final Logger LOG = LoggerFactory.getLogger(NettyDataPlane.class);

    private final AggregationEngine engine;
    private final EventLoopGroup group;
    private final Channel channel;
    private final boolean epoll;
    private final boolean gro;
    private final OutputBatch out = new OutputBatch(4 * RX_BATCH, true);
    private final Transmitter transmitter;
    /** Read bursts (epoll wake-ups with input), for the batching figure logged at close. */
    private volatile long bursts;

    NettyDataPlane(AggregationEngine engine, InetSocketAddress bind) throws IOException {
        this.engine = engine;
        this.epoll = Epoll.isAvailable();
        ThreadFactory threads = r -> {
            Thread t = new FastThreadLocalThread(r, THREAD_NAME);
            t.setDaemon(true);
            return t;
        };
        group = new MultiThreadIoEventLoopGroup(1, threads,
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        ByteBufAllocator allocator = PooledByteBufAllocator.DEFAULT;
        Bootstrap b = new Bootstrap().group(group)
                .option(ChannelOption.ALLOCATOR, allocator)
                .option(ChannelOption.SO_RCVBUF, SOCKET_BUFFER)
                .option(ChannelOption.SO_SNDBUF, SOCKET_BUFFER)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, PENDING_OUTPUT)
                // Reading starts once the transmitter exists (setAutoRead below hands it over
                // to the event loop through its task queue).
                .option(ChannelOption.AUTO_READ, false)
                .handler(new Inbound());
        this.gro = epoll && "true".equals(System.getProperty(GRO_PROPERTY));
        if (gro) {
            // One recvmsg per read, which takes a sender's whole GSO super-datagram uncut (Netty
            // slices it into its segments); Netty reads the segment size only on this path.
            b.channel(EpollDatagramChannel.class)
                    .option(EpollChannelOption.EPOLL_MODE, EpollMode.LEVEL_TRIGGERED)
                    .option(EpollChannelOption.UDP_GRO, true)
                    .option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, 0)
                    .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(GRO_BUFFER));
        } else if (epoll) {
            b.channel(EpollDatagramChannel.class)
                    .option(EpollChannelOption.EPOLL_MODE, EpollMode.LEVEL_TRIGGERED)
                    .option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, RX_SLOT)
                    .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(RX_SLOT * RX_BATCH));
        } else {
            LOG.warn("native epoll unavailable ({}): the switch data plane uses one system call per datagram",
                    Epoll.unavailabilityCause().toString());
            b.channel(NioDatagramChannel.class)
                    .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(RX_SLOT));
        }
        ChannelFuture f = b.bind(bind).awaitUninterruptibly();
        if (!f.isSuccess()) {
            shutdownGroup();
            throw new IOException("cannot bind the switch data plane to " + bind + ": " + f.cause().getMessage(),
                    f.cause());
        }
        channel = f.channel();
        boolean gso = epoll && SegmentedDatagramPacket.isSupported()
                && !"false".equals(System.getProperty(GSO_PROPERTY));
        transmitter = new Transmitter(channel, allocator, engine.counters(), gso);
        out.drainWith(transmitter::queue);
        channel.config().setAutoRead(true);
        LOG.info("switch data plane listening on {} ({}, receive {}, GSO {})", localAddress(),
                epoll ? "epoll" : "nio", gro ? "GRO" : "recvmmsg x " + (epoll ? RX_BATCH : 1), gso);
    }

    @Override
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) channel.localAddress();
    }

    private static int sourceIp(InetSocketAddress from) {
        InetAddress a = from == null ? null : from.getAddress();
        // A non-IPv4 (or absent) source matches no route: the engine counts it unknown_connection.
        return a instanceof java.net.Inet4Address ? Ipv4UdpHeader.toInt(a) : 0;
    }

    /** Runs on the event loop: every received datagram, then the end of each read burst. */
    private final class Inbound extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (!(msg instanceof DatagramPacket p)) {
                io.netty.util.ReferenceCountUtil.release(msg);
                return;
            }
            try {
                ByteBuf content = p.content();
                int length = content.readableBytes();
                // A view of the pooled receive buffer: the engine only reads [offset, offset + length).
                ByteBuffer view = content.nioBufferCount() == 1
                        ? content.internalNioBuffer(content.readerIndex(), length)
                        : content.nioBuffer();
                engine.process(sourceIp(p.sender()), view, view.position(), length, out);
            } catch (RuntimeException e) {
                // The engine is written not to throw on any input; if it ever does, the
                // datagram is lost, logged, and the switch keeps running.
                LOG.error("engine failed on a {}-byte datagram from {}", p.content().readableBytes(), p.sender(), e);
            } finally {
                p.release();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            bursts = bursts + 1; // event loop only; volatile for the log at close
            try {
                transmitter.queue(out);
                transmitter.flush();
            } catch (RuntimeException e) {
                out.clear();
                engine.counters().recordDrop(DropReason.SEND_FAILED);
                LOG.warn("switch data plane: sending failed: {} (continuing)", e.toString());
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // Receive errors; failed writes are counted by the Transmitter's listener.
            LOG.warn("switch data plane: {} (continuing)", cause.toString());
        }
    }

    /** Closes the socket and stops the thread, each within a deadline; never throws. */
    @Override
    public void close() {
        if (!channel.close().awaitUninterruptibly(CLOSE_DEADLINE_MS, TimeUnit.MILLISECONDS)) {
            LOG.warn("switch data plane socket did not close within {} ms", CLOSE_DEADLINE_MS);
        }
        shutdownGroup();
        // Read after the loop stopped: how well the I/O batched over the switch's life.
        LOG.info("switch data plane stopped: {} datagrams in over {} read bursts, {} datagrams out in {} writes",
                engine.counters().get(SwitchCounters.Counter.PACKETS_IN), bursts,
                engine.counters().get(SwitchCounters.Counter.PACKETS_OUT), transmitter.writes());
    }

    private void shutdownGroup() {
        if (!group.shutdownGracefully(0, 1, TimeUnit.SECONDS)
                .awaitUninterruptibly(CLOSE_DEADLINE_MS, TimeUnit.MILLISECONDS)) {
            LOG.warn("switch data plane thread did not stop within {} ms", CLOSE_DEADLINE_MS);
        }
    }
}
