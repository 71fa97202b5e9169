package io.netreduce.netswitch.engine;

import io.netreduce.wire.roce.Aeth;
import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.roce.FrameError;
import io.netreduce.wire.roce.Opcode;
import io.netreduce.wire.roce.Psn;
import io.netreduce.wire.roce.RoceFrame;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The NetReduce switch datapath without I/O: datagrams in, datagrams out. Used by the UDP
 * data plane, by the simulator and by benchmarks alike.
 *
 * <p>Threading: {@link #process} is called by one datapath thread. Ring and connection
 * management may come from any thread; it is serialised here and published to the datapath
 * as a new immutable {@link RouteTable} through a volatile field, so the datapath never
 * locks. A deleted ring's memory goes back to the budget at once and to the heap when the
 * datapath stops referencing it (within one packet).
 *
 * <p>Every datagram ends in exactly one of: a drop counted under its {@link DropReason}, an
 * unchanged forward, a stored or deferred contribution, or emitted result packets. Hostile
 * input cannot raise out of {@link #process}: parsing is bounds-checked by
 * {@link RoceFrame}, and only a registered connection reaches a ring.
 */
public final class AggregationEngine {
    private final long memoryBudget;
    private final SwitchCounters counters = new SwitchCounters();
    private final Emitter emitter = new Emitter(counters);
    private final RoceFrame frame = new RoceFrame();

    private final Object controlLock = new Object();
    private final Map<Integer, Ring> rings = new LinkedHashMap<>();
    /** {@link Ring#RESEND_SKIP_NANOS} for rings created from now on. */
    private long resendSkipNanos = Ring.RESEND_SKIP_NANOS;
    private final Map<Integer, List<ConnectionSpec>> connections = new LinkedHashMap<>();
    private long memoryUsed;
    private volatile RouteTable routes = RouteTable.EMPTY;
    /** The buffer the data plane receives into ({@link #receiveArea}), or null. */
    private ByteBuffer receiveArea;

    public AggregationEngine(long memoryBudgetBytes) {
        if (memoryBudgetBytes <= 0) {
            throw new IllegalArgumentException("aggregator memory budget must be positive: " + memoryBudgetBytes);
        }
        this.memoryBudget = memoryBudgetBytes;
    }

    public SwitchCounters counters() {
        return counters;
    }

    // ------------------------------------------------------------------ datapath

    /**
     * The rank whose contribution the datagram at {@code offset} is, if it is a request on a
     * ring's data route, else -1: a data plane hands a burst's datagrams to {@link #process}
     * lower ranks first (each connection's in their order), so that more contributions find
     * their lower ranks' already in the sum and are added where they lie ({@link LaneStore}).
     * Datagrams of different connections are independent: taking them in another order is
     * what another interleaving on the wire would have done. Reads the BTH only.
     */
    public int contributor(int sourceIp, ByteBuffer datagram, int offset, int length) {
        if (length < Bth.LENGTH) {
            return -1;
        }
        int opcode = datagram.get(offset + Bth.OPCODE_OFFSET) & 0xFF;
        if (!Opcode.isRequest(opcode)) {
            return -1;
        }
        Route route = routes.get(sourceIp, true, datagram.getInt(offset + Bth.DEST_QP_OFFSET) & Psn.MASK);
        return route == null || !route.isData() ? -1 : route.rank;
    }

    /**
     * Handles one RoCEv2 datagram (BTH .. ICRC at [offset, offset + length) of {@code datagram})
     * that arrived from IPv4 address {@code sourceIp}. Emitted datagrams are appended to
     * {@code out}, which drains through its {@link OutputBatch#drainWith drain} when full
     * (without one, what does not fit is dropped and counted); the input buffer is only read.
     */
    public void process(int sourceIp, ByteBuffer datagram, int offset, int length, OutputBatch out) {
        counters.increment(SwitchCounters.Counter.PACKETS_IN);
        FrameError error = frame.wrap(datagram, offset, length);
        if (error != FrameError.NONE) {
            counters.drop(DropReason.of(error));
            return;
        }
        int opcode = frame.opcode();
        Route route = routes.get(sourceIp, Opcode.isRequest(opcode), frame.bth().destQp());
        if (route == null) {
            counters.drop(DropReason.UNKNOWN_CONNECTION);
            return;
        }
        emitter.begin(out, datagram, offset, length);
        if (!emitter.verifyIcrc(route)) {
            counters.drop(DropReason.BAD_ICRC);
            return;
        }
        if (route.data) {
            if (Opcode.isSend(opcode)) {
                route.ring.onSend(route, frame, emitter);
            } else {
                counters.drop(DropReason.UNSUPPORTED_OPCODE);
            }
        } else {
            // ACK/NAK (and anything on the ACK path) is end-to-end RC traffic: pass it through,
            // noting how far each receiver has acknowledged.
            if (opcode == Opcode.ACKNOWLEDGE && Aeth.isAck(frame.aeth().syndrome())) {
                route.ring.onAck(route.rank, frame.bth().psn(), frame.aeth().msn());
                if (route.ring.answerAwaitedProbe(route.rank, emitter)) {
                    return;
                }
            } else if (opcode == Opcode.ACKNOWLEDGE
                    && frame.aeth().syndrome() == Aeth.SYNDROME_NAK_PSN_SEQUENCE_ERROR
                    && route.ring.absorbNak(route, frame.bth().psn(), frame.aeth().msn(), emitter)) {
                return;
            } else if (opcode == Opcode.ACKNOWLEDGE && Aeth.isRnrNak(frame.aeth().syndrome())) {
                route.ring.onRnrNak(route.rank);
            }
            counters.increment(SwitchCounters.Counter.NON_DATA_FORWARDS);
            emitter.forwardUnchanged(route);
        }
    }

    // ------------------------------------------------------------------ control

    /**
     * Sets how long a go-back-N resend right behind an in-order send is not answered again,
     * for rings created from now on: tests that step the engine by hand on a loaded machine
     * lengthen it, so that a pause of theirs does not look like a sender's timer.
     */
    void resendSkipNanos(long nanos) {
        resendSkipNanos = nanos;
    }

    public long memoryBudget() {
        return memoryBudget;
    }

    /**
     * Declares the one buffer the data plane receives every datagram into, before its thread
     * first calls {@link #process}: rings copy lanes out of it through a typed view built
     * once, one bulk copy per packet instead of two.
     */
    public void receiveArea(ByteBuffer area) {
        synchronized (controlLock) {
            receiveArea = area;
            rings.values().forEach(r -> r.sourceArea(area));
        }
    }

    public long memoryUsed() {
        synchronized (controlLock) {
            return memoryUsed;
        }
    }

    /** Reserves the ring's aggregator memory and allocates it; refused if the budget cannot hold it. */
    public RingInfo createRing(RingConfig config) {
        synchronized (controlLock) {
            if (rings.containsKey(config.ringId())) {
                throw new SwitchConfigException(SwitchConfigException.Kind.CONFLICT,
                        "ring " + Integer.toUnsignedString(config.ringId()) + " already exists");
            }
            long need = config.aggregatorBytes();
            long free = memoryBudget - memoryUsed;
            if (need > free) {
                throw new SwitchConfigException(SwitchConfigException.Kind.INSUFFICIENT_MEMORY, String.format(
                        "ring %s needs %s of aggregator memory (2N=%d slots x %d packets x (%d ranks + 1) x %d B)"
                                + " but only %s of the %s budget is free; use ring all-reduce for it",
                        Integer.toUnsignedString(config.ringId()), bytes(need), config.slots(),
                        config.packetsPerMessage(), config.ranks(), config.mtu(), bytes(free), bytes(memoryBudget)));
            }
            Ring ring;
            try {
                ring = new Ring(config, resendSkipNanos);
                if (receiveArea != null) {
                    ring.sourceArea(receiveArea);
                }
            } catch (OutOfMemoryError e) {
                throw new SwitchConfigException(SwitchConfigException.Kind.INSUFFICIENT_MEMORY,
                        "the JVM heap cannot hold ring " + config.ringId() + "'s " + bytes(need)
                                + " of aggregators; lower the switch's budget or raise -Xmx");
            }
            memoryUsed += need;
            rings.put(config.ringId(), ring);
            connections.put(config.ringId(), new ArrayList<>());
            return info(ring);
        }
    }

    public void deleteRing(int ringId) {
        synchronized (controlLock) {
            Ring ring = rings.remove(ringId);
            if (ring == null) {
                throw notFound(ringId);
            }
            connections.remove(ringId);
            memoryUsed -= ring.config.aggregatorBytes();
            publishRoutes();
        }
    }

    /** Registers rank {@code c.rank()}'s connection of a ring and starts routing its packets and ACKs. */
    public void addConnection(int ringId, ConnectionSpec c) {
        synchronized (controlLock) {
            Ring ring = rings.get(ringId);
            if (ring == null) {
                throw notFound(ringId);
            }
            if (c.rank() >= ring.config.ranks()) {
                throw new SwitchConfigException(SwitchConfigException.Kind.INVALID, "rank " + c.rank()
                        + " out of range for ring " + Integer.toUnsignedString(ringId) + " of "
                        + ring.config.ranks() + " ranks");
            }
            if (ring.dataRoutes[c.rank()] != null) {
                throw new SwitchConfigException(SwitchConfigException.Kind.CONFLICT, "rank " + c.rank()
                        + " of ring " + Integer.toUnsignedString(ringId) + " already has a connection ("
                        + ring.dataRoutes[c.rank()].connection + ")");
            }
            Route data = Route.data(ring, c);
            Route ack = Route.ack(ring, c);
            for (Route existing : allRoutes()) {
                if (existing.key() == data.key() || existing.key() == ack.key() || data.key() == ack.key()) {
                    throw new SwitchConfigException(SwitchConfigException.Kind.CONFLICT, "connection " + c
                            + " shares its (source address, DestQP) for the same packet kind with " + existing.connection
                            + " of ring " + Integer.toUnsignedString(existing.ring.ringId));
                }
            }
            ring.dataRoutes[c.rank()] = data;
            ring.ackRoutes[c.rank()] = ack;
            connections.get(ringId).add(c);
            connections.get(ringId).sort(Comparator.comparingInt(ConnectionSpec::rank));
            publishRoutes();
        }
    }

    public List<RingInfo> rings() {
        synchronized (controlLock) {
            List<RingInfo> list = new ArrayList<>();
            for (Ring r : rings.values()) {
                list.add(info(r));
            }
            return list;
        }
    }

    public RingInfo ring(int ringId) {
        synchronized (controlLock) {
            Ring r = rings.get(ringId);
            if (r == null) {
                throw notFound(ringId);
            }
            return info(r);
        }
    }

    private RingInfo info(Ring r) {
        int registered = r.registeredConnections();
        String state = registered < r.config.ranks() ? "registering"
                : r.newestMessage() == null ? "ready" : "aggregating";
        return new RingInfo(r.config, List.copyOf(connections.get(r.ringId)), state, r.newestMessage(),
                r.messagesCompleted(), r.aggregationsCompleted(), r.config.aggregatorBytes());
    }

    private List<Route> allRoutes() {
        List<Route> all = new ArrayList<>();
        for (Ring r : rings.values()) {
            for (int q = 0; q < r.dataRoutes.length; q++) {
                if (r.dataRoutes[q] != null) {
                    all.add(r.dataRoutes[q]);
                    all.add(r.ackRoutes[q]);
                }
            }
        }
        return all;
    }

    private void publishRoutes() {
        routes = new RouteTable(allRoutes());
    }

    private static SwitchConfigException notFound(int ringId) {
        return new SwitchConfigException(SwitchConfigException.Kind.NOT_FOUND,
                "no ring " + Integer.toUnsignedString(ringId));
    }

    static String bytes(long b) {
        if (b >= 1L << 30) {
            return String.format("%.1f GiB", b / (double) (1L << 30));
        }
        if (b >= 1L << 20) {
            return String.format("%.1f MiB", b / (double) (1L << 20));
        }
        if (b >= 1L << 10) {
            return String.format("%.1f KiB", b / 1024.0);
        }
        return b + " B";
    }
}
