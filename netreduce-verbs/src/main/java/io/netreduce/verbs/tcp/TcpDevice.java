package io.netreduce.verbs.tcp;

import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Counters;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.support.FallbackProgress;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP "device": one listening socket on {@code options.localAddress():options.port()}
 * (port 0 picks a free one; queue-pair endpoints carry the actual port). Each connected
 * queue pair owns one TCP connection; this class accepts them and hands each to the queue
 * pair its handshake names. Its {@link AckTimer} thread watches the connected queue pairs
 * for peers that hang without closing their connection.
 */
final class TcpDevice implements Device {
    private static final Logger LOG = LoggerFactory.getLogger(TcpDevice.class);
    /** How long an accepted socket may take to send its handshake. */
    static final int HANDSHAKE_TIMEOUT_MS = 5_000;
    /**
     * The device looks for queue pairs nobody polls when the first of them would turn idle (a
     * queue pair its caller keeps polling costs one look per
     * {@link FallbackProgress#LONGEST_LOOK_NANOS} or quarter ACK timeout, not a wake-up
     * every few milliseconds), and never sooner than this after the last look.
     */
    static final long FALLBACK_MIN_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final TcpQueuePair[] NONE = new TcpQueuePair[0];
    private static final TcpSetting SPIN = new TcpSetting(TcpVerbsProvider.SPIN_MICROS,
            TcpVerbsProvider.SPIN_MICROS_ENVIRONMENT);
    private static final TcpSetting RECEIVE_CREDITS = new TcpSetting(TcpVerbsProvider.RECEIVE_CREDITS,
            TcpVerbsProvider.RECEIVE_CREDITS_ENVIRONMENT);

    private final DeviceOptions options;
    private final ServerSocketChannel server;
    private final InetSocketAddress boundAddress;
    private final Thread acceptThread;
    private final AckTimer ackTimer;
    private final Counters counters = new Counters();
    private final Map<Integer, TcpQueuePair> queuePairs = new ConcurrentHashMap<>();
    private final List<AutoCloseable> children = new CopyOnWriteArrayList<>();
    private final AtomicInteger nextQpn = new AtomicInteger(1);
    private final AtomicInteger nextRegionId = new AtomicInteger(1);
    /** Regions indexed by id, replaced on (rare) registration so lookups on the data path take no lock. */
    private volatile TcpMemoryRegion[] regions = new TcpMemoryRegion[64];
    private volatile boolean open = true;
    private final TcpProgress progress;
    private final int spinMicros;
    private final boolean receiveCredits;
    private final TcpCongestion congestion;
    /** Connected queue pairs in polled progress, for the fallback; replaced on (rare) change. */
    private volatile TcpQueuePair[] driven = NONE;
    private ScheduledFuture<?> fallbackTask;

    TcpDevice(DeviceOptions options) {
        this.options = options;
        this.progress = TcpProgress.of(options);
        this.spinMicros = spinMicros(options);
        this.receiveCredits = receiveCredits(options);
        this.congestion = TcpCongestion.of(options);
        if (options.localAddress().isAnyLocalAddress()) {
            // Queue-pair endpoints carry this address for peers to dial: it must be a real one.
            throw new VerbsException("tcp device needs a specific local address, not the wildcard "
                    + options.localAddress().getHostAddress() + ": peers dial the address in its queue-pair endpoints");
        }
        InetSocketAddress bind = new InetSocketAddress(options.localAddress(), options.port());
        try {
            server = ServerSocketChannel.open();
            // A device reopened on the same address (the next job, the next test) must not wait
            // for its predecessor's connections to leave TIME_WAIT.
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(bind, 64);
            boundAddress = (InetSocketAddress) server.getLocalAddress();
        } catch (IOException e) {
            throw new VerbsException("tcp device cannot listen on " + bind + ": " + e.getMessage(), e);
        }
        ackTimer = new AckTimer("tcp-verbs-ack-timer-" + boundAddress.getPort());
        acceptThread = new Thread(this::acceptLoop, "tcp-verbs-accept-" + boundAddress.getPort());
        acceptThread.setDaemon(true);
        acceptThread.start();
        LOG.debug("tcp device listening on {} ({} progress, {} µs spin{}, {}congestion control {})", boundAddress,
                progress, spinMicros, options.coresOversubscribed() ? ", yielding: more pollers than cores" : "",
                receiveCredits ? "" : "no receive credits, ",
                congestion.algorithm() == null ? "the system's" : congestion.algorithm());
    }

    private static int spinMicros(DeviceOptions options) {
        String value = SPIN.value(options);
        if (value == null) {
            return TcpCompletionQueue.DEFAULT_SPIN_MICROS;
        }
        try {
            int micros = Integer.parseInt(value);
            if (micros >= 0 && micros <= TcpCompletionQueue.MAX_SPIN_MICROS) {
                return micros;
            }
        } catch (NumberFormatException e) {
            // refused below, with the range
        }
        throw new VerbsException("tcp spin '" + value + "' in " + SPIN.source(options) + " is not a whole number of "
                + "microseconds from 0 to " + TcpCompletionQueue.MAX_SPIN_MICROS);
    }

    private static boolean receiveCredits(DeviceOptions options) {
        String value = RECEIVE_CREDITS.value(options);
        if (value == null || value.equalsIgnoreCase("true")) {
            return true;
        }
        if (value.equalsIgnoreCase("false")) {
            return false;
        }
        throw new VerbsException("tcp receive credits '" + value + "' in " + RECEIVE_CREDITS.source(options)
                + " is neither true nor false");
    }

    /** Whether SENDs under a receive credit complete once written ({@link TcpVerbsProvider#RECEIVE_CREDITS}). */
    boolean receiveCredits() {
        return receiveCredits;
    }

    /** The congestion control its connections get. */
    TcpCongestion congestion() {
        return congestion;
    }

    InetSocketAddress boundAddress() {
        return boundAddress;
    }

    TcpProgress progressMode() {
        return progress;
    }

    /**
     * Puts a connected queue pair in polled progress under the fallback: the device's timer
     * thread drives it whenever nobody has polled it for {@link FallbackProgress#IDLE_NANOS}.
     */
    synchronized void drive(TcpQueuePair qp) {
        driven = TcpQueuePair.with(driven, qp);
        if (fallbackTask == null) {
            scheduleFallbackLocked(FallbackProgress.IDLE_NANOS);
        }
    }

    private void scheduleFallbackLocked(long delayNanos) {
        if (!open) {
            return;
        }
        try {
            fallbackTask = ackTimer.schedule(this::driveIdle, Math.max(FALLBACK_MIN_DELAY_NANOS, delayNanos));
        } catch (RejectedExecutionException e) {
            LOG.debug("tcp device {}: no fallback progress, the device is closing", boundAddress);
        }
    }

    private void driveIdle() {
        TcpQueuePair[] looked = driven;
        long now = System.nanoTime();
        long next = Long.MAX_VALUE;
        for (TcpQueuePair qp : looked) {
            try {
                next = Math.min(next, qp.driveIfIdle(now, FallbackProgress.IDLE_NANOS));
            } catch (RuntimeException e) {
                // Keep the others driven, and this one asked again.
                LOG.error("tcp device {}: fallback progress of {} failed", boundAddress, qp, e);
                next = Math.min(next, FallbackProgress.IDLE_NANOS);
            }
        }
        synchronized (this) {
            fallbackTask = null;
            if (driven != looked) {
                next = Math.min(next, FallbackProgress.IDLE_NANOS); // a queue pair joined after the look
            }
            if (next != Long.MAX_VALUE) {
                scheduleFallbackLocked(next - (System.nanoTime() - now));
            }
        }
    }

    /** The device's one local-ACK-timer thread, shared by its queue pairs. */
    AckTimer ackTimer() {
        return ackTimer;
    }

    @Override
    public String providerName() {
        return TcpVerbsProvider.NAME;
    }

    @Override
    public TransportCapabilities capabilities() {
        return TcpVerbsProvider.CAPABILITIES;
    }

    @Override
    public DeviceOptions options() {
        return options;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
        checkOpen();
        TcpProtectionDomain pd = new TcpProtectionDomain(this);
        children.add(pd);
        return pd;
    }

    @Override
    public CompletionQueue createCompletionQueue(int capacity) {
        checkOpen();
        TcpCompletionQueue cq = new TcpCompletionQueue(capacity, spinMicros, options.coresOversubscribed());
        children.add(cq);
        return cq;
    }

    @Override
    public Counters counters() {
        return counters;
    }

    TcpQueuePair createQueuePair(TcpProtectionDomain pd, QpAttributes attributes) {
        checkOpen();
        int qpn = nextQpn.getAndIncrement();
        if ((qpn & ~0xFFFFFF) != 0) {
            throw new VerbsException("queue-pair numbers exhausted on " + boundAddress);
        }
        TcpQueuePair qp = new TcpQueuePair(this, pd, qpn, attributes);
        queuePairs.put(qpn, qp);
        return qp;
    }

    void forget(TcpQueuePair qp) {
        queuePairs.remove(qp.qpn());
        synchronized (this) {
            driven = TcpQueuePair.without(driven, qp);
        }
    }

    synchronized TcpMemoryRegion register(TcpProtectionDomain pd, ByteBuffer buffer, Set<Access> access) {
        checkOpen();
        int id = nextRegionId.getAndIncrement();
        if (id >= (1 << 30)) {
            throw new VerbsException("memory-region keys exhausted");
        }
        TcpMemoryRegion mr = new TcpMemoryRegion(pd, buffer, id, access);
        TcpMemoryRegion[] table = regions;
        if (id >= table.length) {
            table = java.util.Arrays.copyOf(table, Math.max(table.length * 2, id + 1));
        } else {
            table = table.clone();
        }
        table[id] = mr;
        regions = table;
        return mr;
    }

    synchronized void unregister(TcpMemoryRegion mr) {
        TcpMemoryRegion[] table = regions.clone();
        if (mr.id() < table.length && table[mr.id()] == mr) {
            table[mr.id()] = null;
        }
        regions = table;
    }

    /** The open region a key names, or null. Allocation-free: used for every RDMA WRITE. */
    TcpMemoryRegion regionByKey(int key) {
        int id = TcpMemoryRegion.idOfKey(key);
        TcpMemoryRegion[] table = regions;
        if (id <= 0 || id >= table.length) {
            return null;
        }
        TcpMemoryRegion mr = table[id];
        return mr != null && mr.isOpen() ? mr : null;
    }

    private void acceptLoop() {
        while (open) {
            SocketChannel channel;
            try {
                channel = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (open) {
                    LOG.warn("tcp device {}: accept failed", boundAddress, e);
                }
                continue;
            }
            try {
                handshake(channel);
            } catch (IOException | RuntimeException e) {
                LOG.warn("tcp device {}: dropped incoming connection from {}: {}", boundAddress,
                        remoteOf(channel), e.toString());
                closeQuietly(channel);
            }
        }
    }

    /** Reads the dialer's HELLO, finds the queue pair it names and answers ACCEPT or REJECT. */
    private void handshake(SocketChannel channel) throws IOException {
        channel.socket().setSoTimeout(HANDSHAKE_TIMEOUT_MS);
        byte[] bytes = new byte[Handshake.LENGTH];
        try {
            new DataInputStream(channel.socket().getInputStream()).readFully(bytes);
        } catch (SocketTimeoutException e) {
            throw new IOException("no handshake within " + HANDSHAKE_TIMEOUT_MS + " ms", e);
        }
        ByteBuffer hello = ByteBuffer.wrap(bytes);
        String bad = Handshake.validate(hello);
        if (bad != null || Handshake.kind(hello) != Handshake.KIND_HELLO) {
            counters.increment(Counter.DROP_MALFORMED);
            throw new IOException(bad != null ? bad : "expected HELLO, got kind " + Handshake.kind(hello));
        }
        int source = Handshake.sourceQpn(hello);
        int target = Handshake.targetQpn(hello);
        TcpQueuePair qp = queuePairs.get(target);
        int reason = qp == null ? Handshake.REASON_UNKNOWN_QP : qp.offerIncoming(channel, source);
        if (reason == Handshake.REASON_UNKNOWN_QP) {
            counters.increment(Counter.DROP_UNKNOWN_QP);
        }
        short kind = reason == Handshake.REASON_NONE ? Handshake.KIND_ACCEPT : Handshake.KIND_REJECT;
        ByteBuffer reply = Handshake.encode(kind, target, source, reason);
        while (reply.hasRemaining()) {
            channel.write(reply);
        }
        if (reason != Handshake.REASON_NONE) {
            LOG.info("tcp device {}: rejected connection from {} (QP {}) to QP {}: {}", boundAddress,
                    remoteOf(channel), source, target, Handshake.reasonText(reason));
            closeQuietly(channel);
        }
    }

    static Object remoteOf(SocketChannel channel) {
        try {
            return channel.getRemoteAddress();
        } catch (IOException e) {
            return "?";
        }
    }

    static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            LOG.debug("close of {} failed", c, e);
        }
    }

    private void checkOpen() {
        if (!open) {
            throw new VerbsException("tcp device " + boundAddress + " is closed");
        }
    }

    @Override
    public void close() {
        if (!open) {
            return;
        }
        open = false;
        closeQuietly(server);
        // Queue pairs first, so their flush completions still reach open completion queues.
        for (TcpQueuePair qp : queuePairs.values()) {
            closeQuietly(qp);
        }
        for (AutoCloseable c : children) {
            closeQuietly(c);
        }
        children.clear();
        ackTimer.close();
        try {
            acceptThread.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.debug("tcp device {} closed; counters {}", boundAddress, counters);
    }

    @Override
    public String toString() {
        return "tcp device " + boundAddress;
    }
}
