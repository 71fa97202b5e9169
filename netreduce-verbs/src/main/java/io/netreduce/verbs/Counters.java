package io.netreduce.verbs;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A set of {@link Counter}s. Updated by provider threads without locks or allocation,
 * read by anyone at any time.
 */
public final class Counters {
    private static final Counter[] ALL = Counter.values();
    private final AtomicLongArray values = new AtomicLongArray(ALL.length);

    public void add(Counter c, long delta) {
        values.getAndAdd(c.ordinal(), delta);
    }

    public void increment(Counter c) {
        values.getAndIncrement(c.ordinal());
    }

    public long get(Counter c) {
        return values.get(c.ordinal());
    }

    /** Sum of every DROP_* counter. */
    public long totalDrops() {
        long sum = 0;
        for (Counter c : ALL) {
            if (c.name().startsWith("DROP_")) {
                sum += values.get(c.ordinal());
            }
        }
        return sum;
    }

    /** A consistent-enough copy for reporting (each value read once). */
    public Map<Counter, Long> snapshot() {
        Map<Counter, Long> m = new EnumMap<>(Counter.class);
        for (Counter c : ALL) {
            m.put(c, values.get(c.ordinal()));
        }
        return m;
    }

    /** Non-zero counters as {@code name=value} pairs, for logs. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("{");
        for (Counter c : ALL) {
            long v = values.get(c.ordinal());
            if (v != 0) {
                if (sb.length() > 1) {
                    sb.append(", ");
                }
                sb.append(c.name().toLowerCase(java.util.Locale.ROOT)).append('=').append(v);
            }
        }
        return sb.append('}').toString();
    }
}
