package io.netreduce.netswitch.engine;

/**
 * One RC connection of a ring, from rank {@code rank}'s queue pair to its successor's:
 * where each end lives (IPv4 address as a big-endian int and UDP port) and both queue-pair
 * numbers. Packets arrive from {@code src} with DestQP {@code dstQpn} and leave towards
 * {@code dst}; ACKs come back from {@code dst} with DestQP {@code srcQpn}.
 */
public record ConnectionSpec(int rank, int srcIp, int srcPort, int srcQpn, int dstIp, int dstPort, int dstQpn) {

    public ConnectionSpec {
        checkPort(srcPort, "src port");
        checkPort(dstPort, "dst port");
        checkQpn(srcQpn, "srcQpn");
        checkQpn(dstQpn, "dstQpn");
        if (rank < 0 || rank >= RingConfig.MAX_RANKS) {
            throw new IllegalArgumentException("rank out of range: " + rank);
        }
    }

    private static void checkPort(int p, String what) {
        if (p <= 0 || p > 0xFFFF) {
            throw new IllegalArgumentException(what + " out of range: " + p);
        }
    }

    private static void checkQpn(int q, String what) {
        if (q < 0 || q > 0xFFFFFF) {
            throw new IllegalArgumentException(what + " must fit 24 bits: " + q);
        }
    }

    public static String ipString(int ip) {
        return (ip >>> 24) + "." + ((ip >>> 16) & 0xFF) + "." + ((ip >>> 8) & 0xFF) + "." + (ip & 0xFF);
    }

    @Override
    public String toString() {
        return "rank " + rank + ": " + ipString(srcIp) + ":" + srcPort + "/qp" + srcQpn + " -> "
                + ipString(dstIp) + ":" + dstPort + "/qp" + dstQpn;
    }
}
