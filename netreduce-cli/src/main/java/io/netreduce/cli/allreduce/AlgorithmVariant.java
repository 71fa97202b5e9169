package io.netreduce.cli.allreduce;

import static io.netreduce.collectives.EnvironmentVariables.ACK_TIMEOUT_MS;
import static io.netreduce.collectives.EnvironmentVariables.HALVING_DOUBLING_BYTES;
import static io.netreduce.collectives.EnvironmentVariables.MESSAGE_BYTES;
import static io.netreduce.collectives.EnvironmentVariables.RING_MESSAGE_BYTES;
import static io.netreduce.collectives.EnvironmentVariables.RING_WINDOW;
import static io.netreduce.collectives.EnvironmentVariables.SMALL_TENSOR_BYTES;
import static io.netreduce.collectives.EnvironmentVariables.WINDOW;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One {@code --algorithm} entry: an algorithm, and optionally library settings of its own,
 * as {@code ring@NETREDUCE_RING_MESSAGE_BYTES=524288}, or settings of the transport's
 * devices, as {@code ring@tcp.spinMicros=0}. Each entry is a group of its own in the same
 * rank processes, with devices of its own, its timed calls alternating with the others', so
 * that two settings are compared over the same seconds of a shared machine, as two
 * algorithms are (separate runs of one setting each differ by more than most settings do).
 *
 * @param label            the entry as written: the name its rows carry
 * @param algorithm        the algorithm's name
 * @param settings         environment variables the group's configuration reads on top of the process's
 * @param deviceProperties the group's {@link io.netreduce.collectives.CommunicatorConfig#deviceProperties()}
 */
public record AlgorithmVariant(String label, String algorithm, Map<String, String> settings,
                               Map<String, String> deviceProperties) {
    /** Between the algorithm and each setting. */
    public static final String SEPARATOR = "@";
    /** What a variant may change: how an algorithm moves data, never where or with whom. */
    public static final Set<String> SETTINGS = Set.of(WINDOW, MESSAGE_BYTES, RING_WINDOW, RING_MESSAGE_BYTES,
            SMALL_TENSOR_BYTES, HALVING_DOUBLING_BYTES, ACK_TIMEOUT_MS);

    public AlgorithmVariant {
        settings = Map.copyOf(settings);
        deviceProperties = Map.copyOf(deviceProperties);
    }

    /**
     * Parses {@code NAME[@KEY=VALUE...]}: KEY one of {@link #SETTINGS}, or a device property
     * (a provider's own key, which has a dot: whether the transport reads it is checked
     * against its provider, {@link RunChecks}). Refuses any other KEY, or one given twice.
     */
    public static AlgorithmVariant parse(String entry) {
        String[] parts = entry.split(SEPARATOR, -1);
        Map<String, String> settings = new LinkedHashMap<>();
        Map<String, String> deviceProperties = new LinkedHashMap<>();
        for (int i = 1; i < parts.length; i++) {
            int eq = parts[i].indexOf('=');
            String key = eq < 0 ? parts[i] : parts[i].substring(0, eq);
            Map<String, String> into = SETTINGS.contains(key) ? settings : key.indexOf('.') > 0 ? deviceProperties : null;
            if (eq <= 0 || into == null) {
                throw new IllegalArgumentException("'" + entry + "': '" + parts[i] + "' is not a setting an algorithm "
                        + "variant can change (KEY=VALUE, KEY one of " + String.join(", ", new TreeSet<>(SETTINGS))
                        + ", or a device property of the transport, as tcp.spinMicros)");
            }
            if (into.put(key, parts[i].substring(eq + 1)) != null) {
                throw new IllegalArgumentException("'" + entry + "' sets " + key + " twice");
            }
        }
        return new AlgorithmVariant(entry, parts[0], settings, deviceProperties);
    }

    public static List<AlgorithmVariant> parseAll(List<String> entries) {
        return entries.stream().map(AlgorithmVariant::parse).toList();
    }

    /** True if any entry runs {@code algorithm}. */
    public static boolean anyRuns(List<String> entries, String algorithm) {
        return parseAll(entries).stream().anyMatch(v -> v.algorithm().equals(algorithm));
    }
}
