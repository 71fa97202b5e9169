package io.netreduce.sim.collective;

import io.netreduce.sim.engine.FlowSimulator;
import io.netreduce.sim.engine.Route;
import io.netreduce.sim.engine.Transfer;
import io.netreduce.sim.topology.ClusterNetwork;
import io.netreduce.sim.topology.ClusterSpec;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns all-reduce algorithms into flow-group schedules. Work is appended in stages: every
 * flow group of a stage starts once every group of the previous stage has been delivered.
 * Within a ring step that is the textbook step barrier (each GPU forwards what it just
 * received), and it is what makes the classic α–β cost 2(P−1)·(α + S/(P·B)) the exact answer
 * on an uncongested network.
 *
 * <p>Symmetry: every stage is expressed as a few groups of identical flows (see
 * {@link Transfer}); which machines and GPUs play which role is decided here, and roles
 * become separate link classes in {@link ClusterNetwork}.
 */
public final class ScheduleBuilder {

    /** Messages per NetReduce ring the simulator will schedule (each is one flow group in memory). */
    static final long MAX_MESSAGES = 20_000_000;

    private final FlowSimulator sim;
    private final ClusterNetwork net;
    private final ClusterSpec spec;
    private List<Transfer> frontier = List.of();

    public ScheduleBuilder(FlowSimulator sim, ClusterNetwork net) {
        this.sim = sim;
        this.net = net;
        this.spec = net.spec();
    }

    /** Appends the whole all-reduce of {@code bytes} per GPU using {@code algorithm}. */
    public ScheduleBuilder allReduce(Algorithm algorithm, double bytes) {
        int n = spec.gpusPerMachine();
        switch (algorithm) {
            case FLAT_RING -> flatRing(bytes);
            case HIERARCHICAL -> {
                intraChain(bytes, "hier.reduce");
                ringAmongMachines(bytes, "hier.ring");
                intraChain(bytes, "hier.bcast");
            }
            case NETREDUCE -> {
                intraChain(bytes, "nr.reduce");
                netReduce(bytes, 1, "nr");
                intraChain(bytes, "nr.bcast");
            }
            case PARALLEL_NETREDUCE -> {
                intraRing(bytes, "pnr.reduceScatter");
                netReduce(bytes / n, n, "pnr");
                intraRing(bytes, "pnr.allGather");
            }
            default -> throw new IllegalArgumentException("unsupported algorithm " + algorithm);
        }
        return this;
    }

    /**
     * One ring through all P GPUs, machine after machine, leaf after leaf: reduce-scatter and
     * all-gather, 2(P−1) steps of S/P. Per step, M(n−1) flows stay inside machines, and of the
     * M machine-to-machine flows, one per leaf crosses the spine when the job spans leaves.
     */
    public void flatRing(double bytes) {
        int m = spec.machines();
        int n = spec.gpusPerMachine();
        long p = (long) m * n;
        if (p == 1) {
            return;
        }
        double chunk = bytes / p;
        List<Group> step = new ArrayList<>();
        long intraFlows = m == 1 ? n : (long) m * (n - 1);
        if (intraFlows > 0) {
            step.add(new Group("flat.intra", intraFlows, net.intraHop("flat.intra")));
        }
        if (m > 1) {
            addMachineRingGroups(step, "flat");
        }
        for (long s = 0; s < 2 * (p - 1); s++) {
            stage(step, chunk, s < p - 1 ? "flat.rs" : "flat.ag");
        }
    }

    /** Ring all-reduce among one GPU per machine: 2(M−1) steps of S/M over the NICs. */
    public void ringAmongMachines(double bytes, String role) {
        int m = spec.machines();
        if (m == 1) {
            return;
        }
        List<Group> step = new ArrayList<>();
        addMachineRingGroups(step, role);
        double chunk = bytes / m;
        for (int s = 0; s < 2 * (m - 1); s++) {
            stage(step, chunk, role);
        }
    }

    /** Flows of a ring through the machines, ordered leaf by leaf: local hops and spine-crossing hops. */
    private void addMachineRingGroups(List<Group> step, String role) {
        int m = spec.machines();
        int leaves = spec.leaves();
        if (leaves == 1) {
            step.add(new Group(role + ".local", m, net.machineHop(role + ".local", false, 1)));
        } else {
            if (m > leaves) {
                step.add(new Group(role + ".local", m - leaves, net.machineHop(role + ".local", false, 1)));
            }
            step.add(new Group(role + ".cross", leaves, net.machineHop(role + ".cross", true, 1)));
        }
    }

    /** Ring reduce-scatter (or all-gather) inside every machine: n−1 steps of S/n, all n GPUs sending. */
    public void intraRing(double bytes, String role) {
        int n = spec.gpusPerMachine();
        if (n == 1) {
            return;
        }
        List<Group> step = List.of(new Group(role, (long) spec.machines() * n, net.intraHop(role)));
        for (int s = 0; s < n - 1; s++) {
            stage(step, bytes / n, role);
        }
    }

    /**
     * Pipelined chain inside every machine (reduce towards, or broadcast from, the master GPU): the
     * buffer is cut into K chunks of at most {@code pipelineChunkBytes}, and in pipeline step j
     * every chain hop h with a chunk c = j − h in flight moves it: K + n − 2 steps.
     */
    public void intraChain(double bytes, String role) {
        int n = spec.gpusPerMachine();
        if (n == 1) {
            return;
        }
        long k = Math.max(1, (long) Math.ceil(bytes / spec.pipelineChunkBytes()));
        double chunk = bytes / k;
        int hops = n - 1;
        Route route = net.intraHop(role);
        for (long j = 0; j < k + hops - 1; j++) {
            long first = Math.max(0, j - (k - 1));
            long last = Math.min(j, hops - 1);
            long activeHops = last - first + 1;
            stage(List.of(new Group(role, spec.machines() * activeHops, route)), chunk, role);
        }
    }

    /**
     * {@code ringsPerMachine} NetReduce rings per machine, each carrying {@code bytesPerRing}.
     * Each ring's host sends fixed-size messages through the aggregating switch; message i+1
     * leaves after message i (one RDMA queue pair sends in order) and message i+N only after
     * the result of message i has arrived (the message-level sliding window).
     */
    public void netReduce(double bytesPerRing, int ringsPerMachine, String role) {
        int m = spec.machines();
        if (m == 1 || bytesPerRing <= 0) {
            return;
        }
        long messageBytes = spec.messageBytes();
        long count = Math.max(1, (long) Math.ceil(bytesPerRing / messageBytes));
        if (count > MAX_MESSAGES) {
            throw new IllegalArgumentException("NetReduce ring of " + bytesPerRing + " bytes in " + messageBytes
                    + "-byte messages needs " + count + " messages; the simulator allows " + MAX_MESSAGES + ": use larger messages");
        }
        int window = spec.windowMessages();
        Route route = net.aggregation(role, ringsPerMachine);
        long flows = (long) m * ringsPerMachine;
        List<Transfer> messages = new ArrayList<>((int) count);
        double sent = 0;
        for (long i = 0; i < count; i++) {
            double size = Math.min(messageBytes, bytesPerRing - sent);
            sent += size;
            Transfer t = sim.transfer(role + ".msg", size, flows, route);
            if (i == 0) {
                t.afterAllDelivered(frontier);
            } else {
                t.after(messages.get((int) (i - 1)), Transfer.Milestone.SENT);
            }
            if (i >= window) {
                t.after(messages.get((int) (i - window)), Transfer.Milestone.DELIVERED);
            }
            messages.add(t);
        }
        // Every message travels the same route, so the last one sent is the last one delivered.
        frontier = List.of(messages.get(messages.size() - 1));
    }

    private void stage(List<Group> groups, double bytesPerFlow, String label) {
        List<Transfer> next = new ArrayList<>(groups.size());
        for (Group g : groups) {
            Transfer t = sim.transfer(label, bytesPerFlow, g.multiplicity, g.route);
            t.afterAllDelivered(frontier);
            next.add(t);
        }
        frontier = next;
    }

    private record Group(String role, long multiplicity, Route route) {
    }
}
