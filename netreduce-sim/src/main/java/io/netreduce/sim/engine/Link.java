package io.netreduce.sim.engine;

/**
 * A unidirectional link (or, in a symmetry-reduced schedule, a <em>class</em> of identical
 * physical links each carrying the same traffic) with a capacity in bytes per second and a
 * one-way latency in seconds that every flow crossing it pays once.
 *
 * <p>The per-allocation scratch fields live here rather than in maps so that recomputing
 * max-min rates touches no hash tables: the engine recomputes rates at every flow arrival
 * and completion, millions of times in a large study.
 */
public final class Link {

    private final int id;
    private final String name;
    private final double capacity;
    private final double latency;

    // Scratch state of the current water-filling round (see MaxMinAllocator).
    int epoch = -1;
    double residual;
    double unfrozenWeight;
    int userCount;
    int[] users = new int[4];

    Link(int id, String name, double capacity, double latency) {
        if (!(capacity > 0)) {
            throw new IllegalArgumentException("link '" + name + "': capacity must be > 0 bytes/s (or +Infinity), got " + capacity);
        }
        if (!(latency >= 0) || Double.isInfinite(latency)) {
            throw new IllegalArgumentException("link '" + name + "': latency must be finite and >= 0 s, got " + latency);
        }
        this.id = id;
        this.name = name;
        this.capacity = capacity;
        this.latency = latency;
    }

    public int id() {
        return id;
    }

    public String name() {
        return name;
    }

    /** Bytes per second; {@code Double.POSITIVE_INFINITY} means the link never constrains a rate. */
    public double capacity() {
        return capacity;
    }

    /** One-way latency in seconds paid by every flow that crosses this link. */
    public double latency() {
        return latency;
    }

    boolean isConstraining() {
        return capacity != Double.POSITIVE_INFINITY;
    }

    void addUser(int groupIndex) {
        if (userCount == users.length) {
            users = java.util.Arrays.copyOf(users, userCount * 2);
        }
        users[userCount++] = groupIndex;
    }

    @Override
    public String toString() {
        return name + "(" + capacity + " B/s, " + latency + " s)";
    }
}
