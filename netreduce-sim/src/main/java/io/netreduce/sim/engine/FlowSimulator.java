package io.netreduce.sim.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A flow-level discrete-event simulator. Flows (or symmetric flow groups, see
 * {@link Transfer}) cross links of finite capacity; at every flow arrival and completion the
 * rates of all active flows are recomputed to the max-min fair allocation; between events
 * every flow drains at its rate. A flow's last byte arrives its route's latency after it was
 * sent, and transfers start when the transfers they depend on reach a milestone.
 *
 * <p>Usage: create links and transfers, wire dependencies, call {@link #run()} once.
 */
public final class FlowSimulator {

    /** Completion slack, relative to a flow's size: float drain residue below it counts as done. */
    private static final double RELATIVE_EPSILON = 1e-9;

    private final List<Link> links = new ArrayList<>();
    private final List<Transfer> transfers = new ArrayList<>();
    private final MaxMinAllocator allocator = new MaxMinAllocator();
    private boolean ran;

    public Link link(String name, double capacityBytesPerSecond, double latencySeconds) {
        Link l = new Link(links.size(), name, capacityBytesPerSecond, latencySeconds);
        links.add(l);
        return l;
    }

    public Transfer transfer(String label, double bytesPerFlow, long multiplicity, Route route) {
        if (ran) {
            throw new IllegalStateException("simulation already ran; build a new FlowSimulator");
        }
        Transfer t = new Transfer(transfers.size(), label, bytesPerFlow, multiplicity, route);
        transfers.add(t);
        return t;
    }

    public List<Transfer> transfers() {
        return java.util.Collections.unmodifiableList(transfers);
    }

    /** Runs every transfer to delivery and returns the summary. */
    public SimulationResult run() {
        if (ran) {
            throw new IllegalStateException("a FlowSimulator runs once");
        }
        ran = true;
        ArrayDeque<Transfer> ready = new ArrayDeque<>();
        for (Transfer t : transfers) {
            if (t.pendingDependencies == 0) {
                ready.add(t);
            }
        }
        PriorityQueue<Delivery> deliveries = new PriorityQueue<>();
        List<Transfer> active = new ArrayList<>();
        double now = 0;
        long events = 0;
        long allocations = 0;
        long sequence = 0;
        int delivered = 0;
        double makespan = 0;

        while (true) {
            // 1. Start everything whose dependencies are met at this instant.
            boolean changed = false;
            while (!ready.isEmpty()) {
                Transfer t = ready.poll();
                t.startTime = now;
                if (t.remaining <= 0) {
                    sequence = markSent(t, now, ready, deliveries, sequence);
                    events++;
                } else {
                    active.add(t);
                    changed = true;
                }
            }
            if (changed) {
                allocator.allocate(active);
                allocations++;
                // Flows on links without capacity limits finish at once.
                boolean instant = false;
                for (int i = active.size() - 1; i >= 0; i--) {
                    Transfer t = active.get(i);
                    if (t.rate == Double.POSITIVE_INFINITY) {
                        removeAt(active, i);
                        t.remaining = 0;
                        sequence = markSent(t, now, ready, deliveries, sequence);
                        events++;
                        instant = true;
                    }
                }
                if (instant) {
                    if (!active.isEmpty()) {
                        allocator.allocate(active);
                        allocations++;
                    }
                    continue;
                }
            }

            // 2. Find the next event: a flow finishing or a last byte arriving.
            double untilFinish = Double.POSITIVE_INFINITY;
            Transfer first = null;
            for (int i = 0; i < active.size(); i++) {
                Transfer t = active.get(i);
                double d = t.remaining / t.rate;
                if (d < untilFinish) {
                    untilFinish = d;
                    first = t;
                }
            }
            Delivery next = deliveries.peek();
            double nextDelivery = next == null ? Double.POSITIVE_INFINITY : next.time;
            if (untilFinish == Double.POSITIVE_INFINITY && next == null) {
                break;
            }
            if (now + untilFinish <= nextDelivery) {
                drain(active, untilFinish);
                now += untilFinish;
                // The flow that defined this step is done by construction, whatever float
                // residue the drain left: this guarantees progress on every iteration.
                first.remaining = 0;
                boolean finished = false;
                for (int i = active.size() - 1; i >= 0; i--) {
                    Transfer t = active.get(i);
                    if (t.remaining <= RELATIVE_EPSILON * t.bytesPerFlow()) {
                        removeAt(active, i);
                        t.remaining = 0;
                        sequence = markSent(t, now, ready, deliveries, sequence);
                        events++;
                        finished = true;
                    }
                }
                if (finished && !active.isEmpty()) {
                    allocator.allocate(active);
                    allocations++;
                }
            } else {
                drain(active, nextDelivery - now);
                now = nextDelivery;
                while (!deliveries.isEmpty() && deliveries.peek().time <= now) {
                    Transfer t = deliveries.poll().transfer;
                    t.deliveredTime = now;
                    delivered++;
                    events++;
                    makespan = Math.max(makespan, now);
                    release(t, Transfer.Milestone.DELIVERED, ready);
                }
            }
        }
        if (delivered != transfers.size()) {
            Transfer stuck = null;
            for (Transfer t : transfers) {
                if (Double.isNaN(t.deliveredTime)) {
                    stuck = t;
                    break;
                }
            }
            throw new IllegalStateException((transfers.size() - delivered) + " of " + transfers.size()
                    + " transfers never completed (dependency cycle or missing predecessor), first: " + stuck
                    + " waiting on " + (stuck == null ? 0 : stuck.pendingDependencies) + " dependencies");
        }
        long flows = 0;
        for (Transfer t : transfers) {
            flows += t.multiplicity();
        }
        return new SimulationResult(makespan, transfers.size(), flows, events, allocations);
    }

    private long markSent(Transfer t, double now, ArrayDeque<Transfer> ready, PriorityQueue<Delivery> deliveries, long sequence) {
        t.sentTime = now;
        deliveries.add(new Delivery(now + t.route().latency(), sequence, t));
        release(t, Transfer.Milestone.SENT, ready);
        return sequence + 1;
    }

    private static void release(Transfer t, Transfer.Milestone milestone, ArrayDeque<Transfer> ready) {
        Transfer[] dependents = t.dependents(milestone);
        int n = t.dependentCount(milestone);
        for (int i = 0; i < n; i++) {
            Transfer d = dependents[i];
            if (--d.pendingDependencies == 0) {
                ready.add(d);
            }
        }
    }

    private static void drain(List<Transfer> active, double dt) {
        if (dt <= 0) {
            return;
        }
        for (int i = 0; i < active.size(); i++) {
            Transfer t = active.get(i);
            t.remaining -= t.rate * dt;
        }
    }

    private static void removeAt(List<Transfer> list, int i) {
        int last = list.size() - 1;
        list.set(i, list.get(last));
        list.remove(last);
    }

    /** A pending last-byte arrival, ordered by time then creation so runs are deterministic. */
    private static final class Delivery implements Comparable<Delivery> {
        final double time;
        final long sequence;
        final Transfer transfer;

        Delivery(double time, long sequence, Transfer transfer) {
            this.time = time;
            this.sequence = sequence;
            this.transfer = transfer;
        }

        @Override
        public int compareTo(Delivery o) {
            int c = Double.compare(time, o.time);
            return c != 0 ? c : Long.compare(sequence, o.sequence);
        }
    }
}
