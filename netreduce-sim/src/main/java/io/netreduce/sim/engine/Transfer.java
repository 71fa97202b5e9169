package io.netreduce.sim.engine;

import java.util.Arrays;

/**
 * A flow group: {@code multiplicity} identical flows of {@code bytesPerFlow} bytes each,
 * all following {@link Route} (per link instance, {@code weight} of them share it). One
 * group with multiplicity 1 is an ordinary flow.
 *
 * <p>Why groups: the collective schedules are symmetric (in a ring step every machine sends
 * the same amount over an identical path at the same time). Max-min fairness gives
 * symmetric flows equal rates, so simulating one representative with the right per-link
 * weights gives exactly the same timing as simulating all k flows, at 1/k of the cost.
 *
 * <p>A transfer starts when all its dependencies are met. Two milestones can be depended on:
 * {@link Milestone#SENT} (its last byte left the sender: the sender's queue is free, as for
 * the next message on an RDMA queue pair) and {@link Milestone#DELIVERED} (its last byte
 * arrived, route latency later: the receiver may use the data).
 */
public final class Transfer {

    /** What a dependent waits for. */
    public enum Milestone { SENT, DELIVERED }

    private static final Transfer[] NONE = new Transfer[0];

    private final int id;
    private final String label;
    private final double bytesPerFlow;
    private final long multiplicity;
    private final Route route;

    int pendingDependencies;
    private Transfer[] waitingOnSent = NONE;
    private int waitingOnSentCount;
    private Transfer[] waitingOnDelivered = NONE;
    private int waitingOnDeliveredCount;

    double remaining;
    double rate;
    boolean frozen;
    double startTime = Double.NaN;
    double sentTime = Double.NaN;
    double deliveredTime = Double.NaN;

    Transfer(int id, String label, double bytesPerFlow, long multiplicity, Route route) {
        if (!(bytesPerFlow >= 0) || Double.isInfinite(bytesPerFlow)) {
            throw new IllegalArgumentException("transfer '" + label + "': bytes per flow must be finite and >= 0, got " + bytesPerFlow);
        }
        if (multiplicity < 1) {
            throw new IllegalArgumentException("transfer '" + label + "': multiplicity must be >= 1, got " + multiplicity);
        }
        this.id = id;
        this.label = label;
        this.bytesPerFlow = bytesPerFlow;
        this.multiplicity = multiplicity;
        this.route = route;
        this.remaining = bytesPerFlow;
    }

    /** This transfer starts only after {@code other} reaches {@code milestone}. */
    public Transfer after(Transfer other, Milestone milestone) {
        if (other == this) {
            throw new IllegalArgumentException("transfer '" + label + "' cannot depend on itself");
        }
        if (!Double.isNaN(startTime)) {
            throw new IllegalStateException("transfer '" + label + "' already started; add dependencies before running");
        }
        pendingDependencies++;
        other.addDependent(this, milestone);
        return this;
    }

    /** Starts after every transfer in {@code others} is delivered (a barrier). */
    public Transfer afterAllDelivered(Iterable<Transfer> others) {
        for (Transfer t : others) {
            after(t, Milestone.DELIVERED);
        }
        return this;
    }

    private void addDependent(Transfer dependent, Milestone milestone) {
        if (milestone == Milestone.SENT) {
            if (waitingOnSentCount == waitingOnSent.length) {
                waitingOnSent = Arrays.copyOf(waitingOnSent, Math.max(2, waitingOnSentCount * 2));
            }
            waitingOnSent[waitingOnSentCount++] = dependent;
        } else {
            if (waitingOnDeliveredCount == waitingOnDelivered.length) {
                waitingOnDelivered = Arrays.copyOf(waitingOnDelivered, Math.max(2, waitingOnDeliveredCount * 2));
            }
            waitingOnDelivered[waitingOnDeliveredCount++] = dependent;
        }
    }

    Transfer[] dependents(Milestone milestone) {
        return milestone == Milestone.SENT ? waitingOnSent : waitingOnDelivered;
    }

    int dependentCount(Milestone milestone) {
        return milestone == Milestone.SENT ? waitingOnSentCount : waitingOnDeliveredCount;
    }

    public int id() {
        return id;
    }

    public String label() {
        return label;
    }

    public double bytesPerFlow() {
        return bytesPerFlow;
    }

    public long multiplicity() {
        return multiplicity;
    }

    public Route route() {
        return route;
    }

    /** Simulated time the transfer started, NaN before. */
    public double startTime() {
        return startTime;
    }

    /** Simulated time its last byte left the sender, NaN before. */
    public double sentTime() {
        return sentTime;
    }

    /** Simulated time its last byte arrived, NaN before. */
    public double deliveredTime() {
        return deliveredTime;
    }

    @Override
    public String toString() {
        return "Transfer[" + label + " x" + multiplicity + ", " + bytesPerFlow + " B]";
    }
}
