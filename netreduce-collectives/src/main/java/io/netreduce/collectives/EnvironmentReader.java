package io.netreduce.collectives;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Map;

/** Turns launcher and NETREDUCE_* variables into a {@link CommunicatorConfig}. */
final class EnvironmentReader {
    private EnvironmentReader() {
    }

    static CommunicatorConfig read(Map<String, String> env) {
        CommunicatorConfig.Builder b = CommunicatorConfig.builder();
        String[][] launchers = {
                {"NETREDUCE_RANK", "NETREDUCE_WORLD_SIZE", "NETREDUCE_*"},
                {"RANK", "WORLD_SIZE", "torchrun"},
                {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"},
                {"SLURM_PROCID", "SLURM_NTASKS", "Slurm"}};
        for (String[] l : launchers) {
            if (env.containsKey(l[0]) || env.containsKey(l[1])) {
                b.rank(integer(env, l[0], 0)).worldSize(integer(env, l[1], 1))
                        .source("rank/size from " + l[2] + " (" + l[0] + ", " + l[1] + ")");
                break;
            }
        }
        String master = first(env, "NETREDUCE_MASTER_ADDR", "MASTER_ADDR");
        if (master != null) {
            b.masterAddress(master).source("master address from " + which(env, "NETREDUCE_MASTER_ADDR", "MASTER_ADDR"));
        }
        String port = first(env, "NETREDUCE_MASTER_PORT", "MASTER_PORT");
        if (port != null) {
            b.masterPort(parse(port, "master port"));
        }
        if (env.containsKey("NETREDUCE_ALGORITHM")) {
            b.algorithm(env.get("NETREDUCE_ALGORITHM").trim().toLowerCase(java.util.Locale.ROOT));
        }
        if (env.containsKey("NETREDUCE_FALLBACK")) {
            String f = env.get("NETREDUCE_FALLBACK").trim().toLowerCase(java.util.Locale.ROOT);
            b.fallback(f.isEmpty() || f.equals("none") ? null : f);
        }
        if (env.containsKey("NETREDUCE_TRANSPORT")) {
            b.transport(env.get("NETREDUCE_TRANSPORT").trim());
        }
        if (env.containsKey("NETREDUCE_LOCAL_ADDR")) {
            b.localAddress(env.get("NETREDUCE_LOCAL_ADDR").trim());
        }
        if (env.containsKey("NETREDUCE_DEVICE_PORT")) {
            b.devicePort(integer(env, "NETREDUCE_DEVICE_PORT", 0));
        }
        if (env.containsKey("NETREDUCE_SWITCH")) {
            b.switchAddress(hostPort(env.get("NETREDUCE_SWITCH").trim(), 4791, "NETREDUCE_SWITCH"));
        }
        if (env.containsKey("NETREDUCE_SWITCH_CONTROL")) {
            b.switchControl(URI.create(env.get("NETREDUCE_SWITCH_CONTROL").trim()));
        }
        if (env.containsKey("NETREDUCE_WINDOW")) {
            b.window(integer(env, "NETREDUCE_WINDOW", 0));
        }
        if (env.containsKey("NETREDUCE_MESSAGE_BYTES")) {
            b.messageBytes(integer(env, "NETREDUCE_MESSAGE_BYTES", 0));
        }
        if (env.containsKey("NETREDUCE_RING_WINDOW")) {
            b.ringWindow(integer(env, "NETREDUCE_RING_WINDOW", 0));
        }
        if (env.containsKey("NETREDUCE_RING_MESSAGE_BYTES")) {
            b.ringMessageBytes(integer(env, "NETREDUCE_RING_MESSAGE_BYTES", 0));
        }
        if (env.containsKey("NETREDUCE_MTU")) {
            b.mtu(integer(env, "NETREDUCE_MTU", 0));
        }
        if (env.containsKey("NETREDUCE_LOOPBACK_PREFIX")) {
            b.loopbackPrefix(env.get("NETREDUCE_LOOPBACK_PREFIX").trim());
        }
        if (env.containsKey("NETREDUCE_ACK_TIMEOUT_MS")) {
            b.ackTimeout(Duration.ofMillis(integer(env, "NETREDUCE_ACK_TIMEOUT_MS", 0)));
        }
        if (env.containsKey("NETREDUCE_AGREEMENT")) {
            String a = env.get("NETREDUCE_AGREEMENT").trim();
            try {
                b.agreement(CommunicatorConfig.Agreement.valueOf(a.toUpperCase(java.util.Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("NETREDUCE_AGREEMENT must be 'async', 'strict' or 'off', not '" + a + "'", e);
            }
            b.source("agreement " + a.toLowerCase(java.util.Locale.ROOT) + " from NETREDUCE_AGREEMENT");
        }
        if (env.containsKey("NETREDUCE_TIMEOUT_SECONDS")) {
            String t = env.get("NETREDUCE_TIMEOUT_SECONDS").trim();
            try {
                b.timeout(Duration.ofMillis((long) (Double.parseDouble(t) * 1000)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("NETREDUCE_TIMEOUT_SECONDS is not a number: '" + t + "'", e);
            }
        }
        return b.build();
    }

    static InetSocketAddress hostPort(String text, int defaultPort, String what) {
        int colon = text.lastIndexOf(':');
        if (colon < 0) {
            return new InetSocketAddress(text, defaultPort);
        }
        return new InetSocketAddress(text.substring(0, colon), parse(text.substring(colon + 1), what + " port"));
    }

    private static String first(Map<String, String> env, String a, String b) {
        return env.containsKey(a) ? env.get(a).trim() : env.containsKey(b) ? env.get(b).trim() : null;
    }

    private static String which(Map<String, String> env, String a, String b) {
        return env.containsKey(a) ? a : b;
    }

    private static int integer(Map<String, String> env, String key, int absent) {
        String v = env.get(key);
        return v == null ? absent : parse(v.trim(), key);
    }

    private static int parse(String v, String what) {
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " is not an integer: '" + v + "'", e);
        }
    }
}
