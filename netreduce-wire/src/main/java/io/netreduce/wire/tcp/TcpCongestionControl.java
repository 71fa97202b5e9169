package io.netreduce.wire.tcp;

import io.netreduce.wire.udp.NativeUdp;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A TCP connection's congestion control (Linux {@code TCP_CONGESTION}), which the JDK has no
 * socket option for: set and read through the native library ({@code
 * native/udp/tcp_congestion.c}). Where it is not loaded every call says why and changes
 * nothing, and connections keep the system's default.
 */
public final class TcpCongestionControl {
    /** Where Linux names the algorithm new connections get. */
    private static final Path SYSTEM_DEFAULT = Path.of("/proc/sys/net/ipv4/tcp_congestion_control");

    private TcpCongestionControl() {
    }

    /** Sets {@code channel}'s congestion control to {@code name}; null on success, else why not. */
    public static String set(SocketChannel channel, String name) {
        if (!NativeUdp.available()) {
            return "the native library is not loaded (" + NativeUdp.unavailableReason() + ")";
        }
        int r = set0(channel, name);
        return r == 0 ? null : NativeUdp.error(-r);
    }

    /** {@code channel}'s congestion control, or null where it cannot be read. */
    public static String get(SocketChannel channel) {
        return NativeUdp.available() ? get0(channel) : null;
    }

    /** The algorithm new connections get from the system, or null off Linux. */
    public static String systemDefault() {
        try {
            return Files.readString(SYSTEM_DEFAULT).trim();
        } catch (IOException | SecurityException e) {
            return null;
        }
    }

    private static native int set0(SocketChannel channel, String name);

    private static native String get0(SocketChannel channel);
}
