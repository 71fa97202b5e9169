package io.netreduce.collectives.algorithm;

import io.netreduce.collectives.algorithm.netreduce.NetReduceAlgorithm;
import io.netreduce.collectives.algorithm.ring.RingAlgorithm;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The built-in algorithms by name ({@link io.netreduce.collectives.CommunicatorConfig#ALGORITHMS}):
 * where a new algorithm is added, and where a name from a configuration (requested or
 * fallback) becomes an instance.
 */
public final class Algorithms {
    private record Entry(String name, Supplier<CollectiveAlgorithm> factory) {
    }

    private static final List<Entry> BUILT_IN = List.of(
            new Entry(NetReduceAlgorithm.NAME, NetReduceAlgorithm::new),
            new Entry(RingAlgorithm.NAME, RingAlgorithm::new));

    private Algorithms() {
    }

    /** A new, not yet joined instance of the algorithm called {@code name}. */
    public static CollectiveAlgorithm create(String name) {
        for (Entry e : BUILT_IN) {
            if (e.name.equals(name.toLowerCase(Locale.ROOT))) {
                return e.factory.get();
            }
        }
        throw new IllegalArgumentException("unknown algorithm '" + name + "': use one of " + names());
    }

    public static boolean isKnown(String name) {
        return name != null && BUILT_IN.stream().anyMatch(e -> e.name.equals(name.toLowerCase(Locale.ROOT)));
    }

    public static List<String> names() {
        return BUILT_IN.stream().map(Entry::name).toList();
    }
}
