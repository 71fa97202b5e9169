package io.netreduce.verbs.soft;

import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.VerbsException;
import java.util.Set;

/**
 * Provider-specific {@link DeviceOptions#properties()} keys of the soft provider, with
 * their defaults. docs/protocol.md lists them for users.
 */
final class SoftProperties {
    /** Path of a pcap file that receives every packet the device sends (before egress faults). */
    static final String PCAP = "soft.pcap";
    /** Most request PSNs a queue pair keeps unacknowledged (rxe uses 128). */
    static final String MAX_OUTSTANDING_PSNS = "soft.maxOutstandingPsns";
    static final int DEFAULT_MAX_OUTSTANDING_PSNS = 512;
    /** Request packets without AckReq before one is forced (rxe: 64). */
    static final String ACK_EVERY = "soft.ackEvery";
    static final int DEFAULT_ACK_EVERY = 64;
    /**
     * Least microseconds without an acknowledgement after which a requester sends its newest
     * unacknowledged packet again, once, so that a lost tail (or its lost ACK) is answered by
     * an ACK or a NAK instead of waiting out the ACK timeout (the probe waits twice the
     * smoothed round trip when that is longer); 0 turns probes off. 10 ms: measured, a 1 ms
     * floor cost a 4 KiB netreduce all-reduce about 35 µs per call (the probe timer firing on
     * the device's event loop every millisecond), 10 ms nothing measurable.
     */
    static final String TAIL_PROBE_MICROS = "soft.tailProbeMicros";
    static final int DEFAULT_TAIL_PROBE_MICROS = 10_000;
    /** Whether to batch equal-size packets into UDP GSO super-datagrams. */
    static final String GSO = "soft.gso";
    /**
     * Whether the device receives through the native batched UDP I/O
     * ({@code io.netreduce.wire.udp.NativeUdp}) where it loads (default true): recvmmsg with
     * GRO on the device's event loop, no object per datagram; false keeps Netty's channel.
     */
    static final String NATIVE_IO = "soft.nativeIo";
    /**
     * With the native I/O, the least payload a packet leaves in registered memory for the
     * socket to gather (headers and ICRC in the arena, no copy in user space); smaller
     * payloads are copied into the arena, where one more iovec per packet costs the kernel
     * more than the copy saves. A value above the MTU copies every payload.
     */
    static final String GATHER_MIN_BYTES = "soft.gatherMinBytes";
    static final int DEFAULT_GATHER_MIN_BYTES = 2048;
    /**
     * Who runs the protocol: {@code caller} (the thread that polls a completion queue receives,
     * sends and runs the timers itself, under the device's lock, with no thread between it and
     * the socket) or {@code loop} (the device's event loop does everything; callers hand work
     * over and wait for completions). Default: {@code caller} where the device's options say
     * the caller polls ({@link DeviceOptions#callerPolls()}) and the native I/O runs, else
     * {@code loop}. {@code caller} needs the native I/O; without it the loop runs.
     */
    static final String PROGRESS = "soft.progress";
    /** Whether the receive socket asks the kernel for UDP GRO. */
    static final String GRO = "soft.gro";
    /**
     * Whether the device's event loop spins on epoll instead of sleeping (as a DPDK or
     * hardware NIC polls): lowest latency and highest rate, at the cost of one busy core per
     * device. Off by default.
     */
    static final String BUSY_POLL = "soft.busyPoll";
    /** Datagram slots per recvmmsg call. */
    static final String RECV_BATCH = "soft.recvBatch";
    static final int DEFAULT_RECV_BATCH = 32;
    /** Socket buffer size in bytes (SO_RCVBUF / SO_SNDBUF). */
    static final String SOCKET_BUFFER = "soft.socketBuffer";
    static final int DEFAULT_SOCKET_BUFFER = 4 << 20;
    /**
     * Microseconds a blocking poll of a completion queue busy-waits (adaptively, see
     * {@link io.netreduce.verbs.support.AdaptiveSpin}) before it sleeps; 0 sleeps at once.
     */
    static final String SPIN_MICROS = "soft.spinMicros";
    static final int DEFAULT_SPIN_MICROS = 50;

    /** Every key above: what {@link SoftProvider#deviceProperties()} reads. */
    static final Set<String> ALL = Set.of(PCAP, MAX_OUTSTANDING_PSNS, ACK_EVERY, TAIL_PROBE_MICROS, GSO, NATIVE_IO,
            GATHER_MIN_BYTES, PROGRESS, GRO, BUSY_POLL, RECV_BATCH, SOCKET_BUFFER, SPIN_MICROS);

    private SoftProperties() {
    }

    /** A device property, else the JVM system property of the same name (a process-wide default). */
    static String property(DeviceOptions o, String key) {
        String v = o.property(key, null);
        return v != null ? v : System.getProperty(key);
    }

    static int intProperty(DeviceOptions o, String key, int def, int min, int max) {
        String v = property(o, key);
        if (v == null) {
            return def;
        }
        try {
            int i = Integer.parseInt(v.trim());
            if (i < min || i > max) {
                throw new VerbsException("device property " + key + "=" + v + " must be in [" + min + ", " + max + "]");
            }
            return i;
        } catch (NumberFormatException e) {
            throw new VerbsException("device property " + key + "=" + v + " is not an integer", e);
        }
    }

    static boolean booleanProperty(DeviceOptions o, String key, boolean def) {
        String v = property(o, key);
        if (v == null) {
            return def;
        }
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(v);
        }
        throw new VerbsException("device property " + key + "=" + v + " must be true or false");
    }
}
