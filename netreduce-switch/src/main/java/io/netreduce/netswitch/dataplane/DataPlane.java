package io.netreduce.netswitch.dataplane;

import io.netreduce.netswitch.engine.AggregationEngine;
import io.netreduce.netswitch.engine.DropReason;
import io.netreduce.netswitch.engine.OutputBatch;
import io.netreduce.verbs.roce.Ipv4UdpHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;

/**
 * The switch's UDP port: one thread receives RoCEv2 datagrams on its own address (port
 * 4791), runs them through the {@link AggregationEngine} and sends what it emits to the
 * destination hosts. I/O is batched: each wake-up drains up to {@link #RX_BATCH} datagrams
 * into preallocated direct buffers before sending the accumulated output, and the thread
 * sleeps in the selector when the socket is idle (it never spins on a shared machine).
 *
 * <p>The loop catches everything a datagram could provoke, counts it and goes on: hostile
 * input never stops the switch.
 */
public final class DataPlane implements AutoCloseable {
    public static final int RX_BATCH = 64;
    private static final int SOCKET_BUFFER = 8 << 20;
    private static final Logger LOG = LoggerFactory.getLogger(DataPlane.class);

    private final AggregationEngine engine;
    private final DatagramChannel channel;
    private final Selector selector;
    private final ByteBuffer[] rx = new ByteBuffer[RX_BATCH];
    private final OutputBatch out = new OutputBatch(RX_BATCH * 2 + 64, true);
    private final DestinationCache destinations = new DestinationCache();
    private final Thread thread;
    private volatile boolean running = true;

    public DataPlane(AggregationEngine engine, InetSocketAddress bind) throws IOException {
        this.engine = engine;
        channel = DatagramChannel.open();
        try {
            channel.setOption(StandardSocketOptions.SO_RCVBUF, SOCKET_BUFFER);
            channel.setOption(StandardSocketOptions.SO_SNDBUF, SOCKET_BUFFER);
            channel.bind(bind);
            channel.configureBlocking(false);
            selector = Selector.open();
            channel.register(selector, SelectionKey.OP_READ);
        } catch (IOException e) {
            channel.close();
            throw new IOException("cannot bind the switch data plane to " + bind + ": " + e.getMessage(), e);
        }
        for (int i = 0; i < RX_BATCH; i++) {
            rx[i] = ByteBuffer.allocateDirect(OutputBatch.MAX_DATAGRAM);
        }
        thread = new Thread(this::run, "netreduce-switch-dataplane");
        thread.setDaemon(true);
        thread.start();
        LOG.info("switch data plane listening on {}", localAddress());
    }

    public InetSocketAddress localAddress() {
        try {
            return (InetSocketAddress) channel.getLocalAddress();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private void run() {
        while (running) {
            try {
                selector.select(100);
                selector.selectedKeys().clear();
                drain();
            } catch (IOException | RuntimeException e) {
                if (running) {
                    LOG.warn("switch data plane: {} (continuing)", e.toString());
                }
            }
        }
    }

    /** Receives until the socket is empty, in batches of {@link #RX_BATCH}. */
    private void drain() throws IOException {
        while (running) {
            int received = 0;
            while (received < RX_BATCH) {
                ByteBuffer b = rx[received];
                b.clear();
                SocketAddress from = channel.receive(b);
                if (from == null) {
                    break;
                }
                received++;
                int source = sourceIp(from);
                try {
                    engine.process(source, b, 0, b.position(), out);
                } catch (RuntimeException e) {
                    // The engine is written not to throw on any input; if it ever does, the
                    // datagram is lost, logged, and the switch keeps running.
                    LOG.error("engine failed on a {}-byte datagram from {}", b.position(), from, e);
                }
                if (out.remaining() < io.netreduce.netswitch.engine.RingConfig.MAX_RANKS + 1) {
                    flush();
                }
            }
            flush();
            if (received < RX_BATCH) {
                return;
            }
        }
    }

    private static int sourceIp(SocketAddress from) {
        InetAddress a = ((InetSocketAddress) from).getAddress();
        try {
            return Ipv4UdpHeader.toInt(a);
        } catch (IllegalArgumentException e) {
            return 0;
        }
    }

    private void flush() {
        for (int i = 0; i < out.size(); i++) {
            ByteBuffer b = out.buffer(i);
            b.limit(out.length(i)).position(0);
            try {
                if (channel.send(b, destinations.get(out.ip(i), out.port(i))) == 0) {
                    engine.counters().recordDrop(DropReason.SEND_FAILED);
                }
            } catch (IOException e) {
                engine.counters().recordDrop(DropReason.SEND_FAILED);
            } finally {
                b.clear();
            }
        }
        out.clear();
    }

    @Override
    public void close() {
        running = false;
        selector.wakeup();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            selector.close();
            channel.close();
        } catch (IOException e) {
            LOG.warn("closing the data plane socket: {}", e.toString());
        }
    }

    /** Socket addresses by (IPv4, port), built once each so sending allocates nothing. */
    private static final class DestinationCache {
        private long[] keys = new long[64];
        private InetSocketAddress[] values = new InetSocketAddress[64];
        private int size;

        InetSocketAddress get(int ip, int port) {
            long key = ((ip & 0xFFFFFFFFL) << 16) | port;
            int mask = keys.length - 1;
            int i = (int) (key * 0x9E3779B97F4A7C15L >>> 40) & mask;
            while (values[i] != null) {
                if (keys[i] == key) {
                    return values[i];
                }
                i = (i + 1) & mask;
            }
            InetSocketAddress a = new InetSocketAddress(toInet(ip), port);
            if (size * 2 >= keys.length) {
                grow();
                return get(ip, port);
            }
            keys[i] = key;
            values[i] = a;
            size++;
            return a;
        }

        private void grow() {
            long[] k = keys;
            InetSocketAddress[] v = values;
            keys = new long[k.length * 2];
            values = new InetSocketAddress[k.length * 2];
            size = 0;
            for (int i = 0; i < k.length; i++) {
                if (v[i] != null) {
                    int ip = (int) (k[i] >>> 16);
                    get(ip, (int) (k[i] & 0xFFFF));
                }
            }
        }

        private static InetAddress toInet(int ip) {
            try {
                return InetAddress.getByAddress(new byte[] {(byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8), (byte) ip});
            } catch (java.net.UnknownHostException e) {
                throw new IllegalArgumentException(e);
            }
        }
    }
}
