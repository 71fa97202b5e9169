package io.netreduce.wire.control;

import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * One RC connection of a ring as the control plane names it: rank {@code rank}'s queue pair
 * {@code srcQpn} on the device at {@code src} sends to its successor's queue pair
 * {@code dstQpn} on the device at {@code dst}. Packets arrive at the switch from {@code src}
 * with DestQP {@code dstQpn} and leave towards {@code dst}; ACKs come back from {@code dst}
 * with DestQP {@code srcQpn}.
 */
public record ConnectionEntry(int rank, InetSocketAddress src, int srcQpn, InetSocketAddress dst, int dstQpn) {

    public ConnectionEntry {
        Objects.requireNonNull(src, "src");
        Objects.requireNonNull(dst, "dst");
        if (rank < 0) {
            throw new IllegalArgumentException("rank must not be negative: " + rank);
        }
        checkQpn(srcQpn, "srcQpn");
        checkQpn(dstQpn, "dstQpn");
        if (!(src.getAddress() instanceof Inet4Address) || !(dst.getAddress() instanceof Inet4Address)) {
            throw new IllegalArgumentException("connection ends must be IPv4 addresses: " + src + " -> " + dst);
        }
    }

    private static void checkQpn(int q, String what) {
        if (q < 0 || q > 0xFFFFFF) {
            throw new IllegalArgumentException(what + " must fit 24 bits: " + q);
        }
    }

    /** {@code a.b.c.d:port}, the form the control plane's JSON uses. */
    public static String text(InetSocketAddress a) {
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }

    @Override
    public String toString() {
        return "rank " + rank + ": " + text(src) + "/qp" + srcQpn + " -> " + text(dst) + "/qp" + dstQpn;
    }
}
