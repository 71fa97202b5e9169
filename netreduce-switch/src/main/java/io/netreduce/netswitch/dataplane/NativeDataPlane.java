package io.netreduce.netswitch.dataplane;

import io.netreduce.netswitch.engine.AggregationEngine;
import io.netreduce.netswitch.engine.DropReason;
import io.netreduce.netswitch.engine.OutputBatch;
import io.netreduce.netswitch.engine.SwitchCounters;
import io.netreduce.wire.roce.Ipv4UdpHeader;
import io.netreduce.wire.udp.AddressCache;
import io.netreduce.wire.udp.NativeUdp;
import io.netreduce.wire.udp.SendPlan;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The switch's UDP port on {@link NativeUdp}: one thread of its own receives with
 * {@code recvmmsg} and UDP GRO (up to {@link #SLOTS} super-datagrams per system call, each a
 * sender's GSO batch of up to 64 datagrams), runs every segment through the engine in place
 * in the receive buffer, and sends the engine's output with one {@code sendmmsg}, each
 * {@link DestinationRuns run} one GSO super-datagram. Nothing is allocated per datagram and
 * no byte is copied between the socket and the engine. The thread waits in {@code recvmmsg}
 * when idle (100 ms at most, to notice {@link #close}): it wakes once per burst, and a
 * {@code poll} before each wait's receive cost 3-7 % of its CPU per packet.
 *
 * <p>Output the socket does not take within {@link #SEND_WAIT_MILLIS} is dropped and counted
 * as {@code send_failed} (bounded memory, as the Netty path's high water mark); hostile
 * input never stops the loop.
 */
final class NativeDataPlane implements DataPlane {
    /** A whole GRO super-datagram. */
    static final int SLOT = 65_536;
    /**
     * Super-datagrams per {@code recvmmsg}: about 500 datagrams of 1 KiB or 120 of 4 KiB per
     * system call, in 512 KiB, so that what the kernel copied in is still in the core's L2
     * cache when the engine checks its ICRC and copies its lanes out (32 slots, 2 MiB, cost
     * the switch 1.1x the CPU per GB at P = 4, MTU 4096: docs/benchmarks.md).
     */
    static final int SLOTS = 8;
    static final int SEND_WAIT_MILLIS = 10;
    private static final int IDLE_WAIT_MILLIS = 100;
    private static final int SEND_BUFFER = 8 << 20;
    /**
     * The receive buffer asked for past {@code net.core.rmem_max} where the process may: every
     * rank's window of unacknowledged packets can be in the socket at once (1 MiB per rank by
     * default), with a lossy rank's go-back-N on top. Eight ranks filled the 8 MiB that
     * rmem_max 4 MiB allows, the kernel dropped whole windows of one rank, and the ring
     * crawled one packet position per round of tail probes (docs/benchmarks.md, "Loss").
     * The kernel charges only what queues.
     */
    static final int RECEIVE_BUFFER = 32 << 20;
    private static final long CLOSE_DEADLINE_MS = 5_000;
    private static final Logger LOG = LoggerFactory.getLogger(NativeDataPlane.class);

    private final AggregationEngine engine;
    private final SwitchCounters counters;
    private final int fd;
    private final InetSocketAddress local;
    private final ByteBuffer rx = ByteBuffer.allocateDirect(SLOT * SLOTS);
    private final IntBuffer meta = ByteBuffer.allocateDirect(4 * NativeUdp.META_INTS * SLOTS)
            .order(ByteOrder.nativeOrder()).asIntBuffer();
    /** The burst's datagrams in the order the engine takes them, and each one's contributor rank. */
    private final int[] order = new int[SLOTS];
    private final int[] keys = new int[SLOTS];
    private final OutputBatch out = new OutputBatch(256, true, true);
    /** Room for every datagram of a batch as a run of its own, in three pieces. */
    private final SendPlan plan = new SendPlan(256 * 16);
    private final long outAddress = NativeUdp.address(out.block());
    /** Rings' result memory: batches mostly hold one ring's results, so one lookup per ring in a row. */
    private final AddressCache results = new AddressCache();
    private final DestinationRuns runs;
    private final DestinationRuns.Sink planner = this::plan;
    private final Thread thread;
    private volatile boolean closed;
    private volatile long bursts;
    private volatile long writes;

    NativeDataPlane(AggregationEngine engine, InetSocketAddress bind) throws IOException {
        this.engine = engine;
        this.counters = engine.counters();
        if (!(bind.getAddress() instanceof Inet4Address)) {
            throw new IOException("the switch data plane binds IPv4 addresses only, not " + bind);
        }
        boolean gso = !"false".equals(System.getProperty(GSO_PROPERTY));
        this.runs = new DestinationRuns(gso);
        out.drainWith(b -> send());
        engine.receiveArea(rx);
        try {
            fd = NativeUdp.open(Ipv4UdpHeader.toInt(bind.getAddress()), bind.getPort(), 0, SEND_BUFFER,
                    true);
        } catch (UncheckedIOException e) {
            throw new IOException("cannot bind the switch data plane to " + bind + ": " + e.getCause().getMessage(), e);
        }
        local = new InetSocketAddress(bind.getAddress(), NativeUdp.localPort(fd));
        int granted = NativeUdp.growReceiveBuffer(fd, RECEIVE_BUFFER);
        if (granted < RECEIVE_BUFFER) {
            LOG.warn("switch data plane on {}: receive buffer {} MiB where {} MiB were asked for: net.core.rmem_max "
                    + "caps it and the process may not pass it; rings of many ranks can overflow it and lose "
                    + "whole windows (raise it: sysctl -w net.core.rmem_max={})", local, granted >> 20,
                    RECEIVE_BUFFER >> 20, RECEIVE_BUFFER);
        }
        thread = new Thread(this::loop, THREAD_NAME);
        thread.setDaemon(true);
        thread.start();
        LOG.info("switch data plane listening on {} (native, receive recvmmsg x {} with GRO into a {} MiB socket "
                + "buffer, GSO {})", local, SLOTS, granted >> 20, gso);
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    private void loop() {
        while (!closed) {
            int n = NativeUdp.receive(fd, rx, SLOT, SLOTS, meta, IDLE_WAIT_MILLIS);
            if (n < 0) {
                if (!closed) {
                    LOG.warn("switch data plane: receive failed: {} (continuing)", NativeUdp.error(-n));
                }
                continue;
            }
            if (n == 0) {
                continue;
            }
            bursts = bursts + 1; // this thread only; volatile for the log at close
            orderByContributor(n);
            for (int k = 0; k < n; k++) {
                int i = order[k];
                int length = meta.get(NativeUdp.META_INTS * i);
                int ip = meta.get(NativeUdp.META_INTS * i + 1);
                int segment = meta.get(NativeUdp.META_INTS * i + 3);
                // A datagram cut by its slot (it cannot be: a slot holds the largest UDP
                // datagram) goes to the engine as it is, and an empty one too: it counts both.
                length = Math.min(Math.abs(length), SLOT);
                segment = segment <= 0 ? Math.max(1, length) : segment;
                int base = i * SLOT;
                int at = 0;
                do {
                    try {
                        engine.process(ip, rx, base + at, Math.min(segment, length - at), out);
                    } catch (RuntimeException e) {
                        // The engine is written not to throw on any input; if it ever does, the
                        // datagram is lost, logged, and the switch keeps running.
                        LOG.error("engine failed on a datagram from {}.{}.{}.{}", ip >>> 24, ip >>> 16 & 0xFF,
                                ip >>> 8 & 0xFF, ip & 0xFF, e);
                    }
                    at += segment;
                } while (at < length);
            }
            send();
        }
    }

    /**
     * Puts the burst's {@code n} super-datagrams in the order the engine takes them: lower
     * ranks' contributions first, each sender's datagrams in the order they came (a stable
     * insertion sort of at most {@link #SLOTS}), anything else first of all. More contributions
     * then find their lower ranks' in the sum and are added where they lie rather than held
     * first ({@link AggregationEngine#contributor}): measured at P = 4, 56 to 83 % of packets
     * under {@code SwitchLoad}, 50 to 54 % in netreduce's 64 MiB runs, whose bursts seldom hold
     * several ranks' packets of the same positions.
     */
    private void orderByContributor(int n) {
        for (int i = 0; i < n; i++) {
            int at = i * SLOT;
            int length = Math.min(Math.abs(meta.get(NativeUdp.META_INTS * i)), SLOT);
            int key = engine.contributor(meta.get(NativeUdp.META_INTS * i + 1), rx, at, length);
            int k = i;
            while (k > 0 && keys[k - 1] > key) {
                keys[k] = keys[k - 1];
                order[k] = order[k - 1];
                k--;
            }
            keys[k] = key;
            order[k] = i;
        }
    }

    /** Sends the output batch in runs, one {@code sendmmsg}; drops (counted) what the socket does not take. */
    private void send() {
        if (out.size() == 0) {
            return;
        }
        plan.clear();
        runs.cut(out, planner);
        int planned = plan.runs();
        int sent = plan.send(fd, SEND_WAIT_MILLIS);
        writes = writes + Math.max(0, sent);
        if (sent < planned) {
            int lost = plan.datagramsFrom(Math.max(0, sent));
            counters.recordDrops(DropReason.SEND_FAILED, lost);
            LOG.debug("switch data plane: the socket took {} of {} runs ({}); {} datagrams dropped",
                    Math.max(0, sent), planned, sent < 0 ? NativeUdp.error(-sent) : "full", lost);
        }
        out.clear();
    }

    private void plan(OutputBatch batch, int[] run, int length, int segment, int bytes, int ip, int port) {
        plan.beginRun(ip, port, segment);
        for (int k = 0; k < length; k++) {
            int i = run[k];
            int headers = batch.headerLength(i);
            // headers, then the sum where the ring keeps it, then the ICRC after the headers
            plan.packet(outAddress + batch.offset(i), batch.length(i), headers,
                    headers == 0 ? 0 : results.of(batch.payload(i)) + batch.payloadOffset(i), batch.payloadLength(i));
        }
        plan.endRun(length);
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            thread.join(CLOSE_DEADLINE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("switch data plane thread did not stop within {} ms", CLOSE_DEADLINE_MS);
        } else {
            NativeUdp.close(fd);
        }
        LOG.info("switch data plane stopped: {} datagrams in over {} read bursts, {} datagrams out in {} writes",
                counters.get(SwitchCounters.Counter.PACKETS_IN), bursts,
                counters.get(SwitchCounters.Counter.PACKETS_OUT), writes);
    }
}
