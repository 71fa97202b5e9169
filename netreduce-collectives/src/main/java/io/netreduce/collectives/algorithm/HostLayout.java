package io.netreduce.collectives.algorithm;

import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.EnvironmentVariables;
import io.netreduce.collectives.rendezvous.StoreClient;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which ranks of the group share a host, and each one's local rank there (its index among
 * them). Hierarchical algorithms reduce within a host through shared memory and send one
 * rank per local position across hosts.
 *
 * <p>Found once per communicator ({@link #discover}), in this order:
 * <ol>
 *   <li>{@link CommunicatorConfig#hosts()} set: that many emulated hosts of consecutive ranks
 *       (tests, the demo and benchmarks on one machine);</li>
 *   <li>no launcher said how many ranks share this host and the rendezvous is on loopback:
 *       every rank is its own emulated host, with its own 127.0.0.x (the single-machine
 *       emulation of a cluster the rest of the library uses);</li>
 *   <li>otherwise every rank publishes its host's identity (host name and kernel boot id)
 *       through the rendezvous store and ranks with equal identities share a host, ordered
 *       by the launcher's local rank where it gave one, else by rank.</li>
 * </ol>
 */
public final class HostLayout {
    private static final String KEY = "host-identity/";
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    private final int[] hostOf;
    private final int[] localRankOf;
    private final int[][] ranksOf;
    private final String source;

    private HostLayout(int[] hostOf, int[] localRankOf, int[][] ranksOf, String source) {
        this.hostOf = hostOf;
        this.localRankOf = localRankOf;
        this.ranksOf = ranksOf;
        this.source = source;
    }

    /** Each host's ranks in local-rank order; hosts numbered by their lowest rank. */
    static HostLayout of(List<int[]> hosts, String source) {
        int p = hosts.stream().mapToInt(h -> h.length).sum();
        int[] hostOf = new int[p];
        int[] localOf = new int[p];
        int[][] ranks = hosts.toArray(new int[0][]);
        for (int h = 0; h < ranks.length; h++) {
            for (int l = 0; l < ranks[h].length; l++) {
                hostOf[ranks[h][l]] = h;
                localOf[ranks[h][l]] = l;
            }
        }
        return new HostLayout(hostOf, localOf, ranks, source);
    }

    /** {@code hosts} emulated hosts of {@code size / hosts} consecutive ranks each. */
    public static HostLayout emulated(int size, int hosts) {
        int n = size / hosts;
        List<int[]> groups = new ArrayList<>();
        for (int h = 0; h < hosts; h++) {
            int[] r = new int[n];
            for (int l = 0; l < n; l++) {
                r[l] = h * n + l;
            }
            groups.add(r);
        }
        return of(groups, hosts + " emulated hosts (" + EnvironmentVariables.HOSTS + ")");
    }

    /** Every rank on a host of its own. */
    public static HostLayout separate(int size, String why) {
        List<int[]> groups = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            groups.add(new int[] {r});
        }
        return of(groups, why);
    }

    /**
     * Groups ranks by identity: {@code identity[r]} names rank r's host, {@code launcherLocal[r]}
     * is its local rank as its launcher said (-1 if it said nothing).
     */
    static HostLayout grouped(String[] identity, int[] launcherLocal, String source) {
        Map<String, List<Integer>> byHost = new LinkedHashMap<>();
        for (int r = 0; r < identity.length; r++) {
            byHost.computeIfAbsent(identity[r], k -> new ArrayList<>()).add(r);
        }
        List<int[]> groups = new ArrayList<>();
        for (List<Integer> ranks : byHost.values()) {
            int[] r = ranks.stream().mapToInt(Integer::intValue).toArray();
            boolean launcherOrder = Arrays.stream(r).allMatch(q -> launcherLocal[q] >= 0)
                    && Arrays.stream(r).map(q -> launcherLocal[q]).distinct().count() == r.length;
            if (launcherOrder) {
                r = Arrays.stream(r).boxed().sorted((a, b) -> Integer.compare(launcherLocal[a], launcherLocal[b]))
                        .mapToInt(Integer::intValue).toArray();
            }
            groups.add(r);
        }
        return of(groups, source);
    }

    /** The layout of {@code config}'s group, through {@code store} where ranks must tell each other (see the class comment). */
    public static HostLayout discover(CommunicatorConfig config, StoreClient store) {
        int p = config.worldSize();
        if (config.hosts() > 0) {
            return emulated(p, config.hosts());
        }
        boolean launcherSaid = config.localWorldSize() > 0 || config.localRank() >= 0;
        if (!launcherSaid && isLoopback(config.masterAddress())) {
            return separate(p, "one emulated host per rank (loopback rendezvous; " + EnvironmentVariables.HOSTS
                    + " groups them)");
        }
        store.set(KEY + config.rank(), config.localRank() + " " + identity(), config.timeout());
        String[] identity = new String[p];
        int[] local = new int[p];
        for (int r = 0; r < p; r++) {
            String v = store.get(KEY + r, config.timeout());
            int space = v.indexOf(' ');
            local[r] = Integer.parseInt(v.substring(0, space));
            identity[r] = v.substring(space + 1);
        }
        return grouped(identity, local, "host identities exchanged at rendezvous"
                + (launcherSaid ? ", local ranks from the launcher" : ""));
    }

    private static boolean isLoopback(String address) {
        try {
            return InetAddress.getByName(address).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** This host's name and boot id: equal for processes that can share memory, different across machines. */
    static String identity() {
        String name;
        try {
            name = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            name = System.getenv().getOrDefault("HOSTNAME", "unknown");
        }
        try {
            return name + "/" + new String(Files.readAllBytes(BOOT_ID), StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            return name;
        }
    }

    public int size() {
        return hostOf.length;
    }

    public int hosts() {
        return ranksOf.length;
    }

    public int host(int rank) {
        return hostOf[rank];
    }

    public int localRank(int rank) {
        return localRankOf[rank];
    }

    /** How many ranks share rank {@code rank}'s host. */
    public int localSize(int rank) {
        return ranksOf[hostOf[rank]].length;
    }

    /** The rank at local position {@code local} of host {@code host}. */
    public int rankAt(int host, int local) {
        return ranksOf[host][local];
    }

    /** The ranks per host if every host has the same number, else -1. */
    public int ranksPerHost() {
        int n = ranksOf[0].length;
        for (int[] h : ranksOf) {
            if (h.length != n) {
                return -1;
            }
        }
        return n;
    }

    /** How the layout was found, for the start-up log. */
    public String source() {
        return source;
    }

    /** "2 hosts × 2 ranks" or "hosts of 3, 1 ranks". */
    @Override
    public String toString() {
        int n = ranksPerHost();
        if (n > 0) {
            return hosts() + (hosts() == 1 ? " host" : " hosts") + " × " + n + (n == 1 ? " rank" : " ranks");
        }
        StringBuilder b = new StringBuilder(hosts() + " hosts of ");
        for (int h = 0; h < hosts(); h++) {
            b.append(h == 0 ? "" : ", ").append(ranksOf[h].length);
        }
        return b.append(" ranks").toString();
    }
}
