package io.netreduce.verbs.soft;

import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.support.AckHold;
import io.netreduce.verbs.support.AdaptiveSpin;
import io.netreduce.wire.roce.RoceAddressing;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.CompletionQueue;
import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Counters;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.VerbsException;
import io.netreduce.wire.roce.FrameError;
import io.netreduce.wire.roce.Ipv4UdpHeader;
import io.netreduce.wire.roce.PcapWriter;
import io.netreduce.wire.roce.RoceFrame;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SelectStrategy;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollMode;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.FileDescriptor;
import io.netreduce.wire.udp.NativeUdp;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A soft RoCE device: one emulated host's NIC. It listens on
 * {@code options.localAddress():options.port()} (4791 by default) for every packet
 * addressed to its queue pairs and demultiplexes them by BTH DestQP. Who runs the protocol
 * ({@value SoftProperties#PROGRESS}):
 * <ul>
 *   <li><b>caller</b> (where the caller polls and the native I/O runs): the thread that
 *       polls a completion queue, or posts a send, runs the protocol itself under the
 *       device's lock: it receives from the socket, handles the packets, runs the due timers
 *       and sends, so a completion reaches it with no thread in between. A blocking poll
 *       spins on the socket briefly, then sleeps in {@code poll(2)} on it (a completion from
 *       another thread wakes it). The event loop only drives a device that nobody has driven
 *       for {@link io.netreduce.verbs.support.FallbackProgress#IDLE_NANOS}, as an RC NIC
 *       keeps answering while its application computes, and takes a post whose poster found
 *       the lock taken ({@link CallerProgress}).</li>
 *   <li><b>loop</b>: one Netty epoll event loop runs all the device's queue pairs, so
 *       protocol state needs no lock; posts are handed to it and completions come back.</li>
 * </ul>
 *
 * <p>Receiving batches with recvmmsg and UDP GRO, through the native batched I/O
 * ({@code NativeUdp}: read by the polling caller, or registered with the event loop) where it loads, else through Netty's
 * channel; each burst of received datagrams ends with one ACK per queue pair that owes one
 * and one flush per queue pair socket (sendmmsg / UDP GSO).
 */
final class SoftDevice implements Device {
    private static final Logger LOG = LoggerFactory.getLogger(SoftDevice.class);
    private static final int FIRST_QPN = 0x11;
    private static final int BIND_ATTEMPTS = 256;
    private static final int MAX_DATAGRAM = 65_536;
    private static final long ADDRESS_BASE = 0x1000_0000L;
    private static final int PAGE = 4096;
    /** 64 KiB buffers touched at open: covers a full window of GSO batches plus receive buffers. */
    private static final int PRETOUCH_BUFFERS = 96;
    /** Whether a device of this process has logged which I/O path runs. */
    private static final AtomicBoolean IO_LOGGED = new AtomicBoolean();

    private final DeviceOptions options;
    private final Counters counters = new Counters();
    private final EventLoopGroup group;
    private final EventLoop loop;
    private final ByteBufAllocator allocator = PooledByteBufAllocator.DEFAULT;
    /** Netty's receive channel, or null where the native receive runs. */
    private final Channel receiver;
    /** The native receive socket and its registration with the event loop, or -1 / null. */
    private final int nativeFd;
    private final NativeReceive nativeReceive;
    private final int localIp;
    private final int port;
    private final boolean gso;
    private final int gatherMinBytes;
    private final SendSettings sendSettings;
    /**
     * How long a blocking poll of this device's completion queues spins before it sleeps.
     * The spin always yields. Where the event loop runs the protocol, the completion comes
     * from it, and it needs a core (measured on 2 cores, `probe rtt --transport soft`
     * typical: sleeping at once 84-86 µs, spinning without yielding 143-145, yielding 48-52).
     * Where callers drive, not yielding gained nothing typical (10.4 µs either way) and
     * doubled the 99th percentile (162 against 62 µs): the process's other threads wait.
     */
    private final long spinNanos;
    private final FaultInjector egressFaults;
    private final FaultInjector ingressFaults;
    private final PcapWriter pcap;
    private final IntObjectHashMap<SoftQueuePair> queuePairs = new IntObjectHashMap<>();
    private final ConcurrentHashMap<Integer, SoftMemoryRegion> regionsByRkey = new ConcurrentHashMap<>();
    private final List<SoftProtectionDomain> domains = new CopyOnWriteArrayList<>();
    private final List<SoftCompletionQueue> cqs = new CopyOnWriteArrayList<>();
    private final AtomicInteger nextQpn = new AtomicInteger(FIRST_QPN);
    private final AtomicInteger nextKey = new AtomicInteger(1);
    private final AtomicLong nextAddress = new AtomicLong(ADDRESS_BASE);
    private final ArrayList<SoftQueuePair> dirty = new ArrayList<>();
    /** Where callers drive: queue pairs whose ACK waits for the caller's next move ({@link #driveLocked}). */
    private final ArrayList<SoftQueuePair> acksDeferred = new ArrayList<>();
    private long acksDeferredSince;
    private final Runnable sendHeldAcks = () -> sendDeferredAcks(null);
    private final RoceFrame frame = new RoceFrame();
    /** A datagram held back by injected reordering, copied out of the receive buffer. */
    private final ByteBuffer heldBack = ByteBuffer.allocateDirect(MAX_DATAGRAM);
    private int heldBackLength = -1;
    private volatile boolean closed;
    /** Where callers run the protocol (see the class comment); null where the event loop does. */
    private final CallerProgress progress;
    /** The queue pairs, for sweeping their timers without iterating a map. */
    private SoftQueuePair[] timed = new SoftQueuePair[0];

    SoftDevice(DeviceOptions options) {
        this.options = options;
        this.localIp = Ipv4UdpHeader.toInt(options.localAddress());
        this.gso = SoftProperties.booleanProperty(options, SoftProperties.GSO, true)
                && io.netty.channel.epoll.SegmentedDatagramPacket.isSupported();
        this.gatherMinBytes = SoftProperties.intProperty(options, SoftProperties.GATHER_MIN_BYTES,
                SoftProperties.DEFAULT_GATHER_MIN_BYTES, 1, 1 << 16);
        boolean gro = SoftProperties.booleanProperty(options, SoftProperties.GRO, true);
        this.sendSettings = new SendSettings(
                SoftProperties.intProperty(options, SoftProperties.MAX_OUTSTANDING_PSNS,
                        SoftProperties.DEFAULT_MAX_OUTSTANDING_PSNS, 1, 1 << 22),
                SoftProperties.intProperty(options, SoftProperties.ACK_EVERY, SoftProperties.DEFAULT_ACK_EVERY,
                        1, 1 << 20),
                1_000L * SoftProperties.intProperty(options, SoftProperties.TAIL_PROBE_MICROS,
                        SoftProperties.DEFAULT_TAIL_PROBE_MICROS, 0, 10_000_000));
        this.spinNanos = 1_000L * SoftProperties.intProperty(options, SoftProperties.SPIN_MICROS,
                SoftProperties.DEFAULT_SPIN_MICROS, 0, 1_000_000);
        int recvBatch = SoftProperties.intProperty(options, SoftProperties.RECV_BATCH,
                SoftProperties.DEFAULT_RECV_BATCH, 1, 1024);
        int socketBuffer = SoftProperties.intProperty(options, SoftProperties.SOCKET_BUFFER,
                SoftProperties.DEFAULT_SOCKET_BUFFER, 64 << 10, 1 << 30);
        this.egressFaults = new FaultInjector(options.egressFaults());
        this.ingressFaults = new FaultInjector(options.ingressFaults());
        String pcapPath = options.property(SoftProperties.PCAP, null);
        boolean busyPoll = SoftProperties.booleanProperty(options, SoftProperties.BUSY_POLL, false);
        this.group = new MultiThreadIoEventLoopGroup(1,
                new DefaultThreadFactory("soft-rdma-" + options.localAddress().getHostAddress(), true),
                busyPoll ? EpollIoHandler.newFactory(0, () -> (selectSupplier, hasTasks) -> SelectStrategy.BUSY_WAIT)
                        : EpollIoHandler.newFactory());
        this.loop = group.next();
        boolean nativeIo = NativeUdp.available()
                && SoftProperties.booleanProperty(options, SoftProperties.NATIVE_IO, true);
        if (IO_LOGGED.compareAndSet(false, true)) {
            // once per process: which UDP I/O and CRC-32 the soft provider runs, and why not the native ones
            LOG.info("soft provider: {}", nativeIo || !NativeUdp.available() ? NativeUdp.describe()
                    : "Netty UDP I/O (" + SoftProperties.NATIVE_IO + "=false), the native library's CRC-32");
        }
        boolean callerDrives = callerDrives(options, nativeIo);
        Channel ch = null;
        int fd = -1;
        NativeReceive receive = null;
        try {
            if (nativeIo) {
                fd = NativeUdp.open(localIp, options.port(), socketBuffer, socketBuffer, gro);
                receive = new NativeReceive(fd);
                receive.start(callerDrives);
            } else {
                ch = bindChannel(options, socketBuffer, gro, recvBatch);
            }
        } catch (RuntimeException e) {
            if (fd >= 0) {
                NativeUdp.close(fd);
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e instanceof java.io.UncheckedIOException u ? bindFailure(options, u.getCause().getMessage(), u) : e;
        }
        this.receiver = ch;
        this.nativeFd = fd;
        this.nativeReceive = receive;
        this.port = ch != null ? ((InetSocketAddress) ch.localAddress()).getPort() : NativeUdp.localPort(fd);
        this.pcap = pcapPath != null ? PcapWriter.open(Path.of(pcapPath)) : null;
        this.progress = callerDrives ? new CallerProgress(fd, this::driveLocked,
                options.localAddress().getHostAddress() + ":" + port) : null;
        if (callerDrives) {
            progress.start(loop);
        } else {
            onLoop(this::pretouchPool, Duration.ofSeconds(30), "pre-touch the packet pool");
        }
        LOG.debug("soft device listening on {}:{} ({}, {} runs the protocol; {})",
                options.localAddress().getHostAddress(), port, nativeIo ? "native receive" : "Netty receive",
                callerDrives ? "the polling caller" : "the event loop", options);
    }

    private static boolean callerDrives(DeviceOptions options, boolean nativeIo) {
        String mode = SoftProperties.property(options, SoftProperties.PROGRESS);
        if (mode == null) {
            return options.callerPolls() && nativeIo;
        }
        switch (mode.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "caller":
                if (!nativeIo) {
                    LOG.warn("soft device {}: {}=caller needs the native UDP I/O, which is off ({}); the event loop "
                            + "runs the protocol", options.localAddress().getHostAddress(), SoftProperties.PROGRESS,
                            NativeUdp.available() ? SoftProperties.NATIVE_IO + "=false" : NativeUdp.unavailableReason());
                }
                return nativeIo;
            case "loop":
                return false;
            default:
                throw new VerbsException("device property " + SoftProperties.PROGRESS + "=" + mode
                        + " must be 'caller' (the polling thread runs the protocol) or 'loop' (the device's event "
                        + "loop does)");
        }
    }

    /** Netty's receive path: where the native library does not load, or soft.nativeIo=false. */
    private Channel bindChannel(DeviceOptions options, int socketBuffer, boolean gro, int recvBatch) {
        Bootstrap b = new Bootstrap().group(loop).channel(EpollDatagramChannel.class)
                .option(ChannelOption.ALLOCATOR, allocator)
                .option(ChannelOption.SO_RCVBUF, socketBuffer)
                .option(ChannelOption.SO_SNDBUF, socketBuffer)
                .option(EpollChannelOption.EPOLL_MODE, EpollMode.LEVEL_TRIGGERED)
                .option(EpollChannelOption.UDP_GRO, gro)
                // Netty reads the GRO segment size only on its single-message recvmsg path, so
                // with GRO each read takes one (coalesced) datagram; without it, recvmmsg
                // fills recvBatch slots per system call.
                .option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, gro ? 0 : MAX_DATAGRAM)
                .option(ChannelOption.RCVBUF_ALLOCATOR,
                        new FixedRecvByteBufAllocator(gro ? MAX_DATAGRAM : MAX_DATAGRAM * recvBatch))
                .handler(new Inbound());
        ChannelFuture f = b.bind(options.localAddress(), options.port()).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw bindFailure(options, f.cause().getMessage(), f.cause());
        }
        return f.channel();
    }

    /**
     * Why the device's socket could not bind, with what to do where the address and port are
     * taken: a device owns its address's RoCE port as a NIC does, so a second group in the
     * same process (or another process on that address) needs an address of its own.
     */
    private static VerbsException bindFailure(DeviceOptions options, String reason, Throwable cause) {
        String at = options.localAddress().getHostAddress() + ":" + options.port();
        String hint = reason != null && reason.contains("Address already in use")
                ? " (another device holds it, in this process or another: give each group its own local address, "
                + "NETREDUCE_LOCAL_ADDR or CommunicatorConfig.Builder.localAddress, as each would have its own NIC)"
                : "";
        return new VerbsException("soft device cannot bind " + at + ": " + reason + hint, cause);
    }

    /**
     * Fresh memory costs 11-14 us per 4 KiB page at first touch on these machines: fill the
     * event loop's share of the pooled allocator once, up front, so that the first burst of
     * packets does not stall for page faults (the pool then recycles the same memory).
     */
    private void pretouchPool() {
        ByteBuf[] warm = new ByteBuf[PRETOUCH_BUFFERS];
        for (int i = 0; i < warm.length; i++) {
            warm[i] = allocator.directBuffer(MAX_DATAGRAM, MAX_DATAGRAM);
            warm[i].setZero(0, MAX_DATAGRAM);
        }
        for (ByteBuf b : warm) {
            b.release();
        }
    }

    @Override
    public String providerName() {
        return SoftProvider.NAME;
    }

    @Override
    public TransportCapabilities capabilities() {
        return SoftProvider.CAPABILITIES;
    }

    @Override
    public DeviceOptions options() {
        return options;
    }

    /** The port the device listens on (the chosen one if the options asked for 0). */
    int port() {
        return port;
    }

    int localIp() {
        return localIp;
    }

    boolean gso() {
        return gso;
    }

    /** The least payload the native egress gathers in place ({@link SoftProperties#GATHER_MIN_BYTES}). */
    int gatherMinBytes() {
        return gatherMinBytes;
    }

    EventLoop eventLoop() {
        return loop;
    }

    ByteBufAllocator allocator() {
        return allocator;
    }

    FaultInjector egressFaults() {
        return egressFaults;
    }

    PcapWriter pcap() {
        return pcap;
    }

    @Override
    public Counters counters() {
        return counters;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
        checkOpen();
        SoftProtectionDomain pd = new SoftProtectionDomain(this);
        domains.add(pd);
        return pd;
    }

    @Override
    public CompletionQueue createCompletionQueue(int capacity) {
        checkOpen();
        SoftCompletionQueue cq = new SoftCompletionQueue(this, capacity, new AdaptiveSpin(spinNanos, true));
        cqs.add(cq);
        return cq;
    }

    SoftMemoryRegion register(SoftProtectionDomain pd, ByteBuffer buffer, Set<Access> access) {
        int key = nextKey.getAndIncrement();
        int lkey = key;
        // An odd multiplier is a bijection on 32-bit ints: rkeys are unique yet not guessable
        // from lkeys at a glance, as on hardware.
        int rkey = key * 0x9E3779B1;
        long span = ((long) buffer.capacity() + PAGE - 1) / PAGE * PAGE + PAGE;
        long address = nextAddress.getAndAdd(span);
        SoftMemoryRegion mr = new SoftMemoryRegion(pd, buffer, access, lkey, rkey, address);
        regionsByRkey.put(rkey, mr);
        return mr;
    }

    void deregister(SoftMemoryRegion mr) {
        regionsByRkey.remove(mr.rkey(), mr);
    }

    SoftMemoryRegion regionByRkey(int rkey) {
        return regionsByRkey.get(rkey);
    }

    SoftQueuePair createQueuePair(SoftProtectionDomain pd, QpAttributes attributes) {
        checkOpen();
        for (int attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
            int qpn = nextQpn.getAndIncrement() & 0xFFFFFF;
            if (qpn < FIRST_QPN) {
                continue;
            }
            int sport = RoceAddressing.sourcePort(qpn);
            SoftQueuePair qp;
            if (nativeReceive != null) {
                int fd;
                try {
                    fd = NativeUdp.open(localIp, sport, 0, SoftProperties.intProperty(options, SoftProperties.SOCKET_BUFFER,
                            SoftProperties.DEFAULT_SOCKET_BUFFER, 64 << 10, 1 << 30), false);
                } catch (java.io.UncheckedIOException e) {
                    LOG.debug("QPN {}: source port {} busy ({}), trying the next QPN", qpn, sport, e.getMessage());
                    continue;
                }
                qp = new SoftQueuePair(this, pd, attributes, qpn, null, fd, sendSettings);
            } else {
                Bootstrap b = new Bootstrap().group(loop).channel(EpollDatagramChannel.class)
                        .option(ChannelOption.ALLOCATOR, allocator)
                        .option(ChannelOption.SO_SNDBUF, SoftProperties.intProperty(options,
                                SoftProperties.SOCKET_BUFFER, SoftProperties.DEFAULT_SOCKET_BUFFER, 64 << 10, 1 << 30))
                        .option(ChannelOption.AUTO_READ, false)
                        .handler(new ChannelInboundHandlerAdapter());
                ChannelFuture f = b.bind(options.localAddress(), sport).awaitUninterruptibly();
                if (!f.isSuccess()) {
                    LOG.debug("QPN {}: source port {} busy ({}), trying the next QPN", qpn, sport,
                            f.cause().getMessage());
                    continue;
                }
                qp = new SoftQueuePair(this, pd, attributes, qpn, f.channel(), -1, sendSettings);
            }
            onLoop(() -> {
                queuePairs.put(qpn, qp);
                timed = with(timed, qp);
            }, Duration.ofSeconds(5), "register queue pair " + qpn);
            return qp;
        }
        throw new VerbsException("no free UDP source port in 0xC000-0xFFFF on "
                + options.localAddress().getHostAddress() + " after " + BIND_ATTEMPTS + " attempts");
    }

    void unregister(SoftQueuePair qp) {
        queuePairs.remove(qp.qpn());
        dirty.remove(qp);
        acksDeferred.remove(qp);
        SoftQueuePair[] left = new SoftQueuePair[0];
        for (SoftQueuePair q : timed) {
            if (q != qp) {
                left = with(left, q);
            }
        }
        timed = left;
    }

    private static SoftQueuePair[] with(SoftQueuePair[] qps, SoftQueuePair qp) {
        SoftQueuePair[] more = java.util.Arrays.copyOf(qps, qps.length + 1);
        more[qps.length] = qp;
        return more;
    }

    /** Whether callers run the protocol ({@value SoftProperties#PROGRESS}). */
    boolean callerDrives() {
        return progress != null;
    }

    /** {@code task} as the event loop must run it: under the protocol lock where callers drive. */
    Runnable guarded(Runnable task) {
        return progress != null ? progress.guarded(task) : task;
    }

    /**
     * Where callers drive, runs {@code task} (protocol work of a poster) at once if no other
     * thread runs the protocol; false if one does (or the event loop runs it), and the caller
     * hands the work to the event loop.
     */
    boolean tryRun(Runnable task) {
        return progress != null && progress.tryRun(task);
    }

    /**
     * One turn of progress by a poller, where callers drive: receives what has arrived, runs
     * the timers that are due and ends the burst (ACKs, window, flush). False at once if
     * another thread runs the protocol; true if datagrams arrived.
     */
    boolean drive() {
        return !closed && progress.drive();
    }

    /**
     * A queue pair that sends too and completed a receive in this drive keeps its ACK back
     * for up to {@link AckHold#NANOS}: its next post carries the ACK in the same sendmmsg as
     * the data (a ping-pong's reply); else a drive sends it once it is that old, and a poller
     * sends it before it sleeps. The caller gets the completion one system call sooner and
     * the peer one datagram fewer to read.
     */
    private boolean driveLocked(boolean keepAcks) {
        long now = System.nanoTime();
        if (!acksDeferred.isEmpty() && (!keepAcks || now - acksDeferredSince >= AckHold.NANOS)) {
            sendDeferredAcks(null);
        }
        int received = nativeReceive.receive();
        long due = Long.MAX_VALUE;
        for (SoftQueuePair qp : timed) {
            due = Math.min(due, qp.runDueTimers(now));
        }
        processHeldBack();
        for (int i = 0; i < dirty.size(); i++) {
            SoftQueuePair qp = dirty.get(i);
            if ((keepAcks ? qp.endOfBatchKeepingAck() : endOfBatch(qp)) && !acksDeferred.contains(qp)) {
                if (acksDeferred.isEmpty()) {
                    acksDeferredSince = now;
                }
                acksDeferred.add(qp);
            }
        }
        dirty.clear();
        progress.driven(now, due);
        return received > 0;
    }

    private static boolean endOfBatch(SoftQueuePair qp) {
        qp.endOfBatch();
        return false;
    }

    /**
     * Sends the ACKs {@link #driveLocked} kept back; {@code poster}'s is only queued, to
     * leave with the data its post is about to send.
     */
    void sendDeferredAcks(SoftQueuePair poster) {
        for (int i = 0; i < acksDeferred.size(); i++) {
            acksDeferred.get(i).sendDeferredAck(acksDeferred.get(i) != poster);
        }
        acksDeferred.clear();
    }


    /**
     * Sends {@code qp}'s ACK that {@link #driveLocked} kept back, if it still is, under the
     * protocol lock (the event loop, where it runs the protocol, keeps none back).
     */
    void releaseDeferredAck(SoftQueuePair qp) {
        if (progress != null) {
            progress.locked(qp.releaseAckTask);
        }
    }

    /** The task of {@link #releaseDeferredAck}; the caller holds the protocol lock. */
    void sendDeferredAckOf(SoftQueuePair qp) {
        if (acksDeferred.remove(qp)) {
            qp.sendDeferredAck(true);
        }
    }

    /** A blocking poller with nothing to do sleeps here, where callers drive ({@link CallerProgress#sleep}). */
    void sleep(long nanos, SoftCompletionQueue cq) {
        progress.sleep(nanos, cq, sendHeldAcks); // nobody will post for a while: the held ACKs go first
    }

    /** Ends the sleep of pollers, where callers drive: a completion was pushed or the device closes. */
    void wakeSleepers() {
        progress.wakeSleepers();
    }

    void markDirty(SoftQueuePair qp) {
        dirty.add(qp);
    }

    /**
     * Runs {@code task} on the event loop and waits for it (directly if already there), or
     * where callers drive, on this thread under the protocol lock.
     */
    void onLoop(Runnable task, Duration timeout, String what) {
        if (progress != null) {
            progress.locked(task);
            return;
        }
        if (loop.inEventLoop()) {
            task.run();
            return;
        }
        Future<?> f = loop.submit(task);
        try {
            f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new VerbsException("interrupted while trying to " + what, e);
        } catch (ExecutionException e) {
            throw new VerbsException("failed to " + what + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new VerbsException("timed out after " + timeout.toMillis() + " ms trying to " + what, e);
        }
    }

    /** One datagram at [offset, offset + length) of {@code buf}, which is reused once this returns. */
    private void onDatagram(ByteBuffer buf, int offset, int length) {
        if (ingressFaults.active()) {
            int f = ingressFaults.decide();
            if ((f & FaultInjector.DROP) != 0) {
                counters.increment(Counter.INJECTED_LOSS);
                return;
            }
            if ((f & FaultInjector.CORRUPT) != 0) {
                counters.increment(Counter.INJECTED_CORRUPTIONS);
                int i = offset + ingressFaults.corruptIndex(length);
                buf.put(i, (byte) (buf.get(i) ^ 0x5A));
            }
            if ((f & FaultInjector.DUPLICATE) != 0) {
                counters.increment(Counter.INJECTED_DUPLICATES);
                process(buf, offset, length);
            }
            if ((f & FaultInjector.REORDER) != 0 && heldBackLength < 0 && length <= heldBack.capacity()) {
                counters.increment(Counter.INJECTED_REORDERS);
                heldBack.put(0, buf, offset, length);
                heldBackLength = length;
                return;
            }
            process(buf, offset, length);
            processHeldBack();
            return;
        }
        process(buf, offset, length);
    }

    private void processHeldBack() {
        if (heldBackLength >= 0) {
            int length = heldBackLength;
            heldBackLength = -1;
            process(heldBack, 0, length);
        }
    }

    private void process(ByteBuffer nio, int offset, int length) {
        counters.increment(Counter.PACKETS_RECEIVED);
        counters.add(Counter.BYTES_RECEIVED, length);
        FrameError error = frame.wrap(nio, offset, length);
        if (error != FrameError.NONE) {
            counters.increment(Counter.DROP_MALFORMED);
            if (LOG.isDebugEnabled()) {
                LOG.debug("device {}:{} dropped a {}-byte datagram: {}", options.localAddress().getHostAddress(), port,
                        length, error);
            }
            return;
        }
        SoftQueuePair qp = queuePairs.get(frame.bth().destQp());
        if (qp == null) {
            counters.increment(Counter.DROP_UNKNOWN_QP);
            return;
        }
        qp.onPacket(frame);
    }

    /**
     * An NIO view of the datagram without allocating: Netty hands out each datagram as a
     * slice of its receive buffer, and a slice's own NIO view is a fresh object per call,
     * while the root buffer caches one. Address arithmetic finds the slice in the root.
     */
    private static ByteBuffer view(ByteBuf content, int length) {
        ByteBuf root = content.unwrap();
        if (root != null && root.unwrap() == null && content.hasMemoryAddress() && root.hasMemoryAddress()) {
            long at = content.memoryAddress() + content.readerIndex() - root.memoryAddress();
            return root.internalNioBuffer((int) at, length);
        }
        return content.internalNioBuffer(content.readerIndex(), length);
    }

    private void endOfBurst() {
        processHeldBack();
        // endOfBatch may mark other queue pairs dirty; walk by index and clear at the end.
        for (int i = 0; i < dirty.size(); i++) {
            dirty.get(i).endOfBatch();
        }
        dirty.clear();
    }

    /** Receives every datagram of the device's port. */
    private final class Inbound extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            DatagramPacket p = (DatagramPacket) msg;
            try {
                ByteBuf content = p.content();
                int length = content.readableBytes();
                ByteBuffer nio = view(content, length);
                onDatagram(nio, nio.position(), length);
            } finally {
                p.release();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            endOfBurst();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.warn("soft device {}:{}: receive error", options.localAddress().getHostAddress(), port, cause);
        }
    }

    /**
     * The native receive: the device's socket read with recvmmsg and UDP GRO into one direct
     * buffer of {@link #SLOTS} slots of 64 KiB; each coalesced message is cut back into
     * datagrams by its segment size and handled in place, then the burst ends as on the Netty
     * path. Nothing is allocated per datagram. Where the event loop runs the protocol the
     * socket is registered with it (level triggered); where callers drive, they read it.
     * Confined to whoever runs the protocol.
     */
    private final class NativeReceive implements EpollIoHandle {
        static final int SLOTS = 32;
        static final int SLOT = 65_536;
        /** Receives per readiness event before the loop runs its tasks (posts, timers) again. */
        static final int BATCHES_PER_EVENT = 4;
        private final FileDescriptor fd;
        private final ByteBuffer rx = ByteBuffer.allocateDirect(SLOT * SLOTS);
        private final IntBuffer meta = ByteBuffer.allocateDirect(4 * NativeUdp.META_INTS * SLOTS)
                .order(ByteOrder.nativeOrder()).asIntBuffer();
        private IoRegistration registration;

        NativeReceive(int fd) {
            this.fd = new FileDescriptor(fd);
        }

        void start(boolean callerDrives) {
            if (callerDrives) {
                pretouch();
                return;
            }
            io.netty.util.concurrent.Future<IoRegistration> f = ((IoEventLoop) loop).register(this)
                    .awaitUninterruptibly();
            if (!f.isSuccess()) {
                throw new VerbsException("soft device cannot register its socket with the event loop: " + f.cause(),
                        f.cause());
            }
            registration = f.getNow();
            onLoop(() -> {
                registration.submit(EpollIoOps.EPOLLIN);
                pretouch();
            }, Duration.ofSeconds(10), "start receiving");
        }

        /** Touches the receive buffer once: fresh pages cost 11-14 us each at first touch. */
        private void pretouch() {
            for (int i = 0; i < rx.capacity(); i += 4096) {
                rx.put(i, (byte) 0);
            }
        }

        @Override
        public FileDescriptor fd() {
            return fd;
        }

        @Override
        public void handle(IoRegistration reg, IoEvent event) {
            receive();
            endOfBurst();
        }

        /** Up to {@link #BATCHES_PER_EVENT} recvmmsg calls, each datagram handled; the messages received. */
        int receive() {
            int messages = 0;
            for (int batch = 0; batch < BATCHES_PER_EVENT; batch++) {
                int n = NativeUdp.receive(fd.intValue(), rx, SLOT, SLOTS, meta, 0);
                if (n <= 0) {
                    if (n < 0 && !closed) {
                        LOG.warn("soft device {}:{}: receive failed: {}", options.localAddress().getHostAddress(), port,
                                NativeUdp.error(-n));
                    }
                    break;
                }
                messages += n;
                for (int i = 0; i < n; i++) {
                    int length = Math.min(Math.abs(meta.get(NativeUdp.META_INTS * i)), SLOT);
                    int segment = meta.get(NativeUdp.META_INTS * i + 3);
                    segment = segment <= 0 ? Math.max(1, length) : segment;
                    int base = i * SLOT;
                    for (int at = 0; at < length; at += segment) {
                        onDatagram(rx, base + at, Math.min(segment, length - at));
                    }
                }
                if (n < SLOTS) {
                    break;
                }
            }
            return messages;
        }

        void cancel() {
            if (registration != null) {
                registration.cancel();
            }
        }

        @Override
        public void close() {
            // The device closes the descriptor itself, after the loop let go of it.
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new VerbsException("device " + options.localAddress().getHostAddress() + ":" + port + " is closed");
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            for (SoftProtectionDomain pd : domains) {
                pd.close();
            }
            onLoop(() -> {
                heldBackLength = -1;
                if (receiver != null) {
                    receiver.close();
                } else {
                    nativeReceive.cancel();
                }
            }, Duration.ofSeconds(5), "close device");
        } finally {
            for (SoftCompletionQueue cq : cqs) {
                cq.close();
            }
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            if (progress != null) {
                progress.close(); // no sleeper may still wait on the socket when it closes (and is reused)
            }
            if (nativeFd >= 0) {
                NativeUdp.close(nativeFd);
            }
            if (pcap != null) {
                pcap.close();
            }
        }
        LOG.debug("soft device {}:{} closed; counters {}", options.localAddress().getHostAddress(), port, counters);
    }
}
