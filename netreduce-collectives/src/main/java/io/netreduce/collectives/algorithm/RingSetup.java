package io.netreduce.collectives.algorithm;

import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.rendezvous.StoreClient;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.verbs.QpEndpoint;
import io.netreduce.wire.control.ConnectionEntry;
import io.netreduce.wire.control.RingSpec;
import io.netreduce.wire.control.SwitchControlClient;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.net.UnknownHostException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the ring of queue pairs through the rendezvous store and decides the algorithm.
 * Rank 0 asks the switch for a ring when "netreduce" is requested; when no switch is
 * configured, the switch refuses, or registering the connections fails, every rank falls
 * back to "ring" (and rebuilds its device without the gateway), and the reason is logged.
 */
public final class RingSetup {
    private static final Logger LOG = LoggerFactory.getLogger(RingSetup.class);

    public record Result(String algorithm, int ringId, RingConnections connections) {
    }

    private RingSetup() {
    }

    public static Result run(CommunicatorConfig c, StoreClient store) {
        int r = c.rank();
        int p = c.worldSize();
        Duration t = c.timeout();
        String local = localAddress(c);
        String plan;
        if (r == 0) {
            plan = decide(c);
            store.set("plan", plan, t);
        } else {
            plan = store.get("plan", t);
        }
        for (int gen = 0; ; gen++) {
            boolean inNetwork = plan.startsWith(CommunicatorConfig.NETREDUCE);
            if (!inNetwork && CommunicatorConfig.NETREDUCE.equals(c.algorithm())) {
                String reason = plan.substring(plan.indexOf(' ') + 1);
                if (r == 0) {
                    LOG.warn("rank 0: falling back from netreduce to ring all-reduce: {}", reason);
                } else {
                    LOG.info("rank {}: using ring all-reduce; rank 0 fell back from netreduce: {}", r, reason);
                }
            }
            FaultPlan f = c.faults();
            FaultPlan faults = f.isNone() ? f // each rank its own seed, so losses are independent
                    : new FaultPlan(f.seed() * 31 + r, f.loss(), f.duplicate(), f.reorder(), f.corrupt());
            RingConnections conns = new RingConnections(c.transport(), local, c.devicePort(),
                    inNetwork ? c.switchAddress() : null, c.mtu(), Math.max(c.window(), c.ringWindow()), faults, c.ackTimeout());
            try {
                store.set("ep/" + gen + "/" + r, conns.toNext.localEndpoint() + " " + conns.fromPrev.localEndpoint(), t);
                String[] next = store.get("ep/" + gen + "/" + (r + 1) % p, t).split(" ");
                String[] prev = store.get("ep/" + gen + "/" + (r + p - 1) % p, t).split(" ");
                if (inNetwork) {
                    String go;
                    if (r == 0) {
                        go = register(c, store, gen, ringId(plan));
                        store.set("go/" + gen, go, t);
                    } else {
                        go = store.get("go/" + gen, t);
                    }
                    if (!"ok".equals(go)) {
                        conns.close();
                        plan = "ring " + go;
                        continue;
                    }
                }
                conns.connect(QpEndpoint.parse(next[1]), QpEndpoint.parse(prev[0]), t);
                return new Result(inNetwork ? CommunicatorConfig.NETREDUCE : CommunicatorConfig.RING,
                        inNetwork ? ringId(plan) : 0, conns);
            } catch (RuntimeException e) {
                conns.close();
                throw e;
            }
        }
    }

    /** Rank 0: "netreduce &lt;ringId&gt;" or "ring &lt;why not netreduce&gt;". */
    private static String decide(CommunicatorConfig c) {
        if (CommunicatorConfig.RING.equals(c.algorithm())) {
            return "ring requested";
        }
        if ("tcp".equalsIgnoreCase(c.transport())) {
            return "ring transport 'tcp' cannot carry in-network aggregation: the switch aggregates RoCEv2 frames, "
                    + "so use transport 'soft' (or a real RDMA device) for netreduce";
        }
        if (c.switchAddress() == null) {
            return "ring no switch is configured (set NETREDUCE_SWITCH to its host:port)";
        }
        // Rings are named by their users; a random id keeps concurrent jobs on one switch apart.
        int ringId = 1 + java.util.concurrent.ThreadLocalRandom.current().nextInt(Integer.MAX_VALUE - 1);
        try {
            new SwitchControlClient(c.switchControl(), c.timeout()).createRing(
                    RingSpec.fp32(ringId, c.worldSize(), c.window(), c.messageBytes(), c.mtu()), List.of());
            LOG.info("rank 0: switch {} created ring {} for {} ranks (window {}, {} B messages, MTU {})",
                    c.switchControl(), ringId, c.worldSize(), c.window(), c.messageBytes(), c.mtu());
            return CommunicatorConfig.NETREDUCE + " " + ringId;
        } catch (SwitchControlClient.Refused e) {
            return "ring " + e.getMessage();
        }
    }

    /**
     * Rank 0 registers every connection of the ring with the switch: rank q's toNext queue
     * pair to rank q+1's fromPrev (the switch routes acknowledgements back by srcQpn).
     * Returns "ok" or why not.
     */
    private static String register(CommunicatorConfig c, StoreClient store, int gen, int ringId) {
        int p = c.worldSize();
        QpEndpoint[][] eps = new QpEndpoint[p][];
        for (int q = 0; q < p; q++) {
            String[] e = store.get("ep/" + gen + "/" + q, c.timeout()).split(" ");
            eps[q] = new QpEndpoint[] {QpEndpoint.parse(e[0]), QpEndpoint.parse(e[1])};
        }
        SwitchControlClient sw = new SwitchControlClient(c.switchControl(), c.timeout());
        List<ConnectionEntry> connections = new ArrayList<>();
        for (int q = 0; q < p; q++) {
            QpEndpoint out = eps[q][0];
            QpEndpoint in = eps[(q + 1) % p][1];
            connections.add(new ConnectionEntry(q, new InetSocketAddress(out.address(), out.port()), out.qpn(),
                    new InetSocketAddress(in.address(), in.port()), in.qpn()));
        }
        try {
            sw.registerConnections(ringId, connections);
            return "ok";
        } catch (SwitchControlClient.Refused e) {
            try {
                sw.deleteRing(ringId);
            } catch (SwitchControlClient.Refused ignored) {
                // the ring is unusable either way
            }
            return "registering the ring's connections failed: " + e.getMessage();
        }
    }

    private static int ringId(String plan) {
        return Integer.parseInt(plan.substring(plan.indexOf(' ') + 1).trim());
    }

    /** The configured address, or prefix.(rank+2) (127.0.0.(rank+2) by default) when the master is on loopback. */
    static String localAddress(CommunicatorConfig c) {
        if (c.localAddress() != null) {
            return c.localAddress();
        }
        try {
            if (InetAddress.getByName(c.masterAddress()).isLoopbackAddress()) {
                if (c.rank() > 250) {
                    throw new IllegalArgumentException("more than 251 ranks on one machine: set NETREDUCE_LOCAL_ADDR");
                }
                return c.loopbackPrefix() + (c.rank() + 2);
            }
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("cannot resolve " + c.masterAddress() + ": set NETREDUCE_LOCAL_ADDR", e);
        }
    }
}
