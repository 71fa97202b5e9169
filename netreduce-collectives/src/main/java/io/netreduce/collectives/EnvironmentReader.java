package io.netreduce.collectives;

import static io.netreduce.collectives.EnvironmentVariables.*;

import io.netreduce.wire.roce.RoceAddressing;
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
                {RANK, WORLD_SIZE, "NETREDUCE_*"},
                {TORCHRUN_RANK, TORCHRUN_WORLD_SIZE, "torchrun"},
                {OMPI_RANK, OMPI_WORLD_SIZE, "Open MPI"},
                {SLURM_RANK, SLURM_WORLD_SIZE, "Slurm"}};
        for (String[] l : launchers) {
            if (env.containsKey(l[0]) || env.containsKey(l[1])) {
                b.rank(integer(env, l[0], 0)).worldSize(integer(env, l[1], 1))
                        .source("rank/size from " + l[2] + " (" + l[0] + ", " + l[1] + ")");
                break;
            }
        }
        String local = first(env, TORCHRUN_LOCAL_WORLD_SIZE, OMPI_LOCAL_SIZE);
        if (local != null) {
            b.localWorldSize(parse(local, which(env, TORCHRUN_LOCAL_WORLD_SIZE, OMPI_LOCAL_SIZE)));
        }
        for (String key : new String[] {TORCHRUN_LOCAL_RANK, OMPI_LOCAL_RANK, SLURM_LOCAL_RANK}) {
            if (env.containsKey(key)) {
                b.localRank(integer(env, key, -1));
                break;
            }
        }
        String master = first(env, MASTER_ADDR, TORCHRUN_MASTER_ADDR);
        if (master != null) {
            // "host:port" carries the port too, so a launcher needs to pass one variable only.
            int colon = master.lastIndexOf(':');
            if (colon > 0 && master.indexOf(':') == colon) {
                b.masterPort(parse(master.substring(colon + 1), "master port in '" + master + "'"));
                master = master.substring(0, colon);
            }
            b.masterAddress(master).source("master address from " + which(env, MASTER_ADDR, TORCHRUN_MASTER_ADDR));
        }
        String port = first(env, MASTER_PORT, TORCHRUN_MASTER_PORT);
        if (port != null) {
            b.masterPort(parse(port, "master port"));
        }
        if (env.containsKey(HOSTS)) {
            b.hosts(integer(env, HOSTS, 0));
        }
        if (env.containsKey(HIERARCHICAL)) {
            String h = env.get(HIERARCHICAL).trim().toLowerCase(java.util.Locale.ROOT);
            switch (h) {
                case "auto", "on", "true", "1" -> b.hierarchical(true);
                case "off", "false", "0" -> b.hierarchical(false);
                default -> throw new IllegalArgumentException(HIERARCHICAL + " must be 'auto' or 'off', not '" + h + "'");
            }
        }
        if (env.containsKey(ALGORITHM)) {
            b.algorithm(env.get(ALGORITHM).trim().toLowerCase(java.util.Locale.ROOT));
        }
        if (env.containsKey(FALLBACK)) {
            String f = env.get(FALLBACK).trim().toLowerCase(java.util.Locale.ROOT);
            b.fallback(f.isEmpty() || f.equals("none") ? null : f);
        }
        if (env.containsKey(TRANSPORT)) {
            b.transport(env.get(TRANSPORT).trim());
        }
        if (env.containsKey(LOCAL_ADDR)) {
            b.localAddress(env.get(LOCAL_ADDR).trim());
        }
        if (env.containsKey(DEVICE_PORT)) {
            b.devicePort(integer(env, DEVICE_PORT, 0));
        }
        if (env.containsKey(SWITCH)) {
            b.switchAddress(hostPort(env.get(SWITCH).trim(), RoceAddressing.UDP_PORT, SWITCH));
        }
        if (env.containsKey(SWITCH_CONTROL)) {
            b.switchControl(URI.create(env.get(SWITCH_CONTROL).trim()));
        }
        if (env.containsKey(WINDOW)) {
            b.window(integer(env, WINDOW, 0));
        }
        if (env.containsKey(MESSAGE_BYTES)) {
            b.messageBytes(integer(env, MESSAGE_BYTES, 0));
        }
        if (env.containsKey(RING_WINDOW)) {
            b.ringWindow(integer(env, RING_WINDOW, 0));
        }
        if (env.containsKey(RING_MESSAGE_BYTES)) {
            b.ringMessageBytes(nonNegative(env, RING_MESSAGE_BYTES, "unset it for the size that follows the transport"));
        }
        if (env.containsKey(MTU)) {
            b.mtu(integer(env, MTU, 0));
        }
        if (env.containsKey(LOOPBACK_PREFIX)) {
            b.loopbackPrefix(env.get(LOOPBACK_PREFIX).trim());
        }
        if (env.containsKey(ACK_TIMEOUT_MS)) {
            b.ackTimeout(Duration.ofMillis(integer(env, ACK_TIMEOUT_MS, 0)));
        }
        if (env.containsKey(AGREEMENT)) {
            String a = env.get(AGREEMENT).trim();
            CommunicatorConfig.Agreement mode = CommunicatorConfig.Agreement.parse(a);
            if (mode == null) {
                throw new IllegalArgumentException(AGREEMENT + " must be 'in-band' or 'strict', not '" + a + "'");
            }
            b.agreement(mode);
            b.source("agreement " + mode.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-') + " from "
                    + AGREEMENT + (a.equalsIgnoreCase(mode.name().replace("_", "-")) || a.equalsIgnoreCase(mode.name())
                    ? "" : "='" + a + "'"));
        }
        if (env.containsKey(SMALL_TENSOR_BYTES)) {
            b.smallTensorBytes(nonNegative(env, SMALL_TENSOR_BYTES, "unset it for the threshold that follows the group size"));
        }
        if (env.containsKey(HALVING_DOUBLING_BYTES)) {
            b.halvingDoublingBytes(nonNegative(env, HALVING_DOUBLING_BYTES, "0 turns the halving-doubling schedule off"));
        }
        if (env.containsKey(TIMEOUT_SECONDS)) {
            String t = env.get(TIMEOUT_SECONDS).trim();
            try {
                b.timeout(Duration.ofMillis((long) (Double.parseDouble(t) * 1000)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(TIMEOUT_SECONDS + " is not a number: '" + t + "'", e);
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

    /** The set integer {@code key}, which must not be negative ({@code hint} says what to do instead). */
    private static int nonNegative(Map<String, String> env, String key, String hint) {
        int v = integer(env, key, 0);
        if (v < 0) {
            throw new IllegalArgumentException(key + " must not be negative (" + hint + "): " + v);
        }
        return v;
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
