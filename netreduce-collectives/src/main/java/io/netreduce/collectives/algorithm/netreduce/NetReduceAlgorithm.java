package io.netreduce.collectives.algorithm.netreduce;

import io.netreduce.collectives.EnvironmentVariables;

import io.netreduce.collectives.Collective;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.algorithm.AlgorithmUnavailableException;
import io.netreduce.collectives.algorithm.ElementType;
import io.netreduce.collectives.algorithm.GroupContext;
import io.netreduce.collectives.algorithm.CollectiveCall;
import io.netreduce.collectives.algorithm.ProgressGuard;
import io.netreduce.collectives.algorithm.RingConnections;
import io.netreduce.collectives.algorithm.ScratchTensor;
import io.netreduce.collectives.algorithm.SumBuiltAlgorithm;
import io.netreduce.collectives.algorithm.TensorMemory;
import io.netreduce.collectives.algorithm.Traffic;
import io.netreduce.verbs.Capability;
import io.netreduce.verbs.QpEndpoint;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.Verbs;
import io.netreduce.wire.control.ConnectionEntry;
import io.netreduce.wire.control.RingSpec;
import io.netreduce.wire.control.SwitchControlClient;
import java.net.InetSocketAddress;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.wire.ina.LateRank;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * In-network aggregation: every rank sends its tensor once through a NetReduce switch and
 * receives the sum once ({@link WindowedAllReduce}, the paper's host flow control). Joining
 * creates a ring on the switch (rank 0, through its control plane), builds the ring of RC
 * connections with the switch as every device's gateway, and registers those connections
 * with the switch before anyone connects. The switch only adds, so MAX and MIN are refused;
 * broadcast, all-gather and reduce-scatter are sums ({@link SumBuiltAlgorithm}).
 */
public final class NetReduceAlgorithm extends SumBuiltAlgorithm {
    public static final String NAME = CommunicatorConfig.NETREDUCE;
    private static final Logger LOG = LoggerFactory.getLogger(NetReduceAlgorithm.class);
    private static final String PLAN = "netreduce-plan";
    private static final String GO = "netreduce-go";
    private static final String READY = "ready ";

    private GroupContext group;
    private int ringId;
    private RingConnections connections;
    private WindowedAllReduce window;
    private final ScratchTensor scratch = new ScratchTensor();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String unsupported(ReduceOp op, ElementType type, TransportCapabilities transport) {
        if (!transport.has(Capability.ROCE_V2_FRAMES)) {
            return "algorithm 'netreduce' cannot run over transport '" + transport.transport() + "': it does not carry "
                    + "messages as RoCEv2 packets, so no NetReduce switch can aggregate them; use transport "
                    + transportsWith(Capability.ROCE_V2_FRAMES) + " for netreduce, or algorithm 'ring' over '"
                    + transport.transport() + "' (" + EnvironmentVariables.FALLBACK + "=ring allows the fallback)";
        }
        if (!op.isSum()) {
            return op + " all-reduce needs the ring algorithm: a NetReduce switch can only add (this communicator uses "
                    + "netreduce)";
        }
        if (type != ElementType.FLOAT32) {
            return "netreduce sums float32 tensors only, not " + type;
        }
        return null;
    }

    /** The registered transports that have {@code c}, for messages: "'soft' or 'disni'". */
    private static String transportsWith(Capability c) {
        List<String> names = Verbs.providersWith(c).stream().map(n -> "'" + n + "'").toList();
        return names.isEmpty() ? "with RoCEv2 packets" : String.join(" or ", names);
    }

    /**
     * Every message carries the caller's call digest and the switch sums a message only when
     * every rank's digest is the same (otherwise every rank gets a mismatch notice), so no
     * rank returns from a call the others did not make, with nothing sent to the rendezvous
     * store. The ranks need not start together either: a rank that arrives late keeps the
     * others waiting at the switch, which answers their retransmissions "not ready" once
     * their ACK timers run out (docs/switch.md), instead of letting them exhaust their retries.
     */
    @Override
    public boolean comparesCallsInBand() {
        return true;
    }

    @Override
    public void join(GroupContext g) throws AlgorithmUnavailableException {
        group = g;
        String plan;
        if (g.rank() == 0) {
            plan = createRingOnSwitch(g);
            g.publish(PLAN, plan);
        } else {
            plan = g.await(PLAN);
        }
        if (!plan.startsWith(READY)) {
            throw new AlgorithmUnavailableException(plan);
        }
        ringId = Integer.parseUnsignedInt(plan.substring(READY.length()));
        InetSocketAddress gateway = g.transport().has(Capability.GATEWAY_NEXT_HOP) ? g.config().switchAddress() : null;
        if (gateway == null && g.rank() == 0) {
            LOG.info("rank 0: transport '{}' routes by its fabric, so the NetReduce switch must sit on the path between "
                    + "the ranks (every result is checked to come from it)", g.transport().transport());
        }
        connections = RingConnections.open(g, gateway, g.config().window());
        warnIfRetriesEndBeforeTheLateRankAnswer(g);
        try {
            connections.publishEndpoints(g);
            String go;
            if (g.rank() == 0) {
                go = registerConnections(g);
                g.publish(GO, go);
            } else {
                go = g.await(GO);
            }
            if (!"ok".equals(go)) {
                throw new AlgorithmUnavailableException(go);
            }
            connections.connect(g);
            window = new WindowedAllReduce(connections.pd, connections.toNext, connections.fromPrev, connections.cq,
                    new RingSettings(ringId, g.rank(), g.size(), ElementType.FLOAT32.inaDtype(), g.config().window(),
                            g.config().messageBytes(), g.timeout()));
            prime(g.groupFailureGuard());
        } catch (AlgorithmUnavailableException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Rank 0: "ready &lt;ringId&gt;", or why in-network aggregation cannot run. */
    /**
     * A sender whose retry budget runs out before the switch starts answering for a late rank
     * ({@link LateRank#ANSWER_AFTER_NANOS}) fails the group whenever a rank is that late: say
     * so once, at start, rather than only in the error.
     */
    private static void warnIfRetriesEndBeforeTheLateRankAnswer(GroupContext g) {
        long budget = g.config().ackTimeout().toNanos() * (QpAttributes.DEFAULT_RETRY_COUNT + 1);
        if (g.rank() == 0 && budget < LateRank.ANSWER_AFTER_NANOS) {
            LOG.warn("rank 0: ACK timeout {} ms x {} tries = {} ms is shorter than the {} ms a message waits before the "
                            + "switch answers for a late rank: a rank later than that fails the group "
                            + "(raise " + EnvironmentVariables.ACK_TIMEOUT_MS + ")", g.config().ackTimeout().toMillis(),
                    QpAttributes.DEFAULT_RETRY_COUNT + 1, budget / 1_000_000, LateRank.ANSWER_AFTER_NANOS / 1_000_000);
        }
    }

    private static String createRingOnSwitch(GroupContext g) {
        var c = g.config();
        if (c.switchAddress() == null) {
            return "no switch is configured (set " + EnvironmentVariables.SWITCH + " to its host:port)";
        }
        // Rings are named by their users; a random id keeps concurrent jobs on one switch apart.
        int ringId = 1 + ThreadLocalRandom.current().nextInt(Integer.MAX_VALUE - 1);
        try {
            new SwitchControlClient(c.switchControl(), c.timeout()).createRing(
                    RingSpec.fp32(ringId, g.size(), c.window(), c.messageBytes(), c.mtu()), List.of());
            LOG.info("rank 0: switch {} created ring {} for {} ranks (window {}, {} B messages, MTU {})",
                    c.switchControl(), Integer.toUnsignedString(ringId), g.size(), c.window(), c.messageBytes(),
                    c.mtu());
            return READY + Integer.toUnsignedString(ringId);
        } catch (SwitchControlClient.Refused e) {
            return e.getMessage();
        }
    }

    /**
     * Rank 0 registers every connection of the ring with the switch: rank q's toNext queue
     * pair to rank q+1's fromPrev (the switch routes acknowledgements back by srcQpn).
     * Returns "ok" or why not; on failure the ring is deleted again.
     */
    private String registerConnections(GroupContext g) {
        int p = g.size();
        QpEndpoint[][] eps = new QpEndpoint[p][];
        for (int q = 0; q < p; q++) {
            eps[q] = RingConnections.endpoints(g, q);
        }
        List<ConnectionEntry> entries = new ArrayList<>();
        for (int q = 0; q < p; q++) {
            QpEndpoint out = eps[q][0];
            QpEndpoint in = eps[(q + 1) % p][1];
            entries.add(new ConnectionEntry(q, new InetSocketAddress(out.address(), out.port()), out.qpn(),
                    new InetSocketAddress(in.address(), in.port()), in.qpn()));
        }
        SwitchControlClient sw = new SwitchControlClient(g.config().switchControl(), g.timeout());
        try {
            sw.registerConnections(ringId, entries);
            return "ok";
        } catch (SwitchControlClient.Refused e) {
            deleteRing(sw);
            ringId = 0;
            return "registering the ring's connections failed: " + e.getMessage();
        }
    }

    /**
     * One all-reduce of one element through the switch, as every rank joins (they are in
     * step here): the path is proven end to end before open() returns, and the switch has
     * seen each receiver's ACK, which tells it the PSN each sender's next message starts at
     * (it answers a late rank's peers "not ready" only at that PSN).
     */
    private void prime(ProgressGuard guard) {
        FloatBuffer one = scratch.take(1).put(0, -0.0f);
        allReduce(new CollectiveCall().set(0, Collective.BARRIER, ReduceOp.SUM, 1, -1, guard), one, one);
    }

    @Override
    public void allReduce(CollectiveCall call, FloatBuffer input, FloatBuffer output) {
        int n = output.remaining();
        if (n == 0) {
            // Nothing to sum, but the call must still be compared: one element of -0.0.
            FloatBuffer none = scratch.take(1).put(0, -0.0f);
            input = none;
            output = none;
            n = 1;
        }
        TensorMemory tensors = connections.memory;
        tensors.bind(input, output, false);
        window.run(tensors.inputRegion(), tensors.inputOffset(), tensors.outputRegion(), tensors.outputOffset(), n,
                call.digest(), tensors, call.guard());
    }

    @Override
    protected int groupRank() {
        return group.rank();
    }

    @Override
    public Traffic traffic() {
        return connections == null ? Traffic.NONE : connections.traffic(window == null ? 0 : window.waitNanos());
    }

    /** Frees the transport and, on rank 0, the switch's aggregator memory and connection entries for the next job. */
    @Override
    public void close() {
        if (window != null) {
            window.close();
            window = null;
        }
        if (connections != null) {
            connections.close();
            connections = null;
        }
        if (group != null && group.rank() == 0 && ringId != 0) {
            deleteRing(new SwitchControlClient(group.config().switchControl(), Duration.ofSeconds(5)));
            ringId = 0;
        }
    }

    private void deleteRing(SwitchControlClient sw) {
        try {
            sw.deleteRing(ringId);
        } catch (SwitchControlClient.Refused e) {
            LOG.warn("rank 0: could not delete ring {} from the switch: {}", Integer.toUnsignedString(ringId),
                    e.getMessage());
        }
    }

    @Override
    public String toString() {
        return NAME + (ringId != 0 ? " (switch ring " + Integer.toUnsignedString(ringId) + ")" : "");
    }
}
