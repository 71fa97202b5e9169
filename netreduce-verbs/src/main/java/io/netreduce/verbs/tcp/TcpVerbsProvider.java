package io.netreduce.verbs.tcp;

import io.netreduce.verbs.Capability;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.support.ProviderBase;
import java.util.Set;

/**
 * Reliable-Connection verbs over one TCP connection per queue pair: the portable fallback
 * that runs anywhere a JVM does, with RC semantics (ordered, acknowledged, RNR and error
 * behaviour as ibverbs reports it) but no in-network aggregation.
 */
public final class TcpVerbsProvider extends ProviderBase {
    public static final String NAME = "tcp";
    /**
     * Device option (and system property) choosing who moves the bytes: {@code threads}
     * (a reader and a writer thread per queue pair, progress as on a NIC) or {@code poll}
     * (the thread polling a completion queue drives its queue pairs' sockets). Unset, a
     * device polls when its options say the caller polls ({@link DeviceOptions#callerPolls()}),
     * else uses threads.
     */
    public static final String PROGRESS = "tcp.progress";
    /** Environment variable with the same meaning, read when neither the option nor the property is set. */
    public static final String PROGRESS_ENVIRONMENT = "NETREDUCE_TCP_PROGRESS";
    /**
     * Device option (and system property): with polled progress, how many microseconds a
     * blocking poll keeps polling its sockets after the last byte moved before it sleeps in
     * {@code select} (default {@value TcpCompletionQueue#DEFAULT_SPIN_MICROS}; 0 sleeps at
     * once). Spinning longer cuts a small message's latency by the wake-up it saves, but
     * only pays where every polling thread has a core of its own.
     */
    public static final String SPIN_MICROS = "tcp.spinMicros";
    /** Environment variable with the same meaning, read when neither the option nor the property is set. */
    public static final String SPIN_MICROS_ENVIRONMENT = "NETREDUCE_TCP_SPIN_MICROS";

    /**
     * Device option (and system property): the congestion control of the provider's TCP
     * connections on Linux, {@value TcpCongestion#AUTO} by default (cubic where the system's
     * default is bbr, else the system's), {@value TcpCongestion#SYSTEM} for the system's
     * default, or an algorithm's name ({@code cubic}, {@code reno}, ...: one the system
     * allows). BBR paces each connection at its estimate of the path's bandwidth, and on
     * low-RTT paths that estimate fell to about half the rate in most connections
     * (docs/transports.md).
     */
    public static final String CONGESTION = "tcp.congestion";
    /** Environment variable with the same meaning, read when neither the option nor the property is set. */
    public static final String CONGESTION_ENVIRONMENT = "NETREDUCE_TCP_CONGESTION";

    /**
     * Device option (and system property): {@code true} (the default) lets a SEND that
     * lands in a receive the responder has credited complete once written, with no ACK
     * ({@link FrameHeader}); {@code false} completes every request on its ACK, as RC does:
     * a send's completion then also says that the peer has the data.
     */
    public static final String RECEIVE_CREDITS = "tcp.receiveCredits";
    /** Environment variable with the same meaning, read when neither the option nor the property is set. */
    public static final String RECEIVE_CREDITS_ENVIRONMENT = "NETREDUCE_TCP_RECEIVE_CREDITS";

    /** One framed TCP stream per queue pair, straight to the peer: no RoCEv2 packets, no gateway. */
    public static final TransportCapabilities CAPABILITIES = TransportCapabilities.of(NAME, Capability.RDMA_WRITE_WITH_IMMEDIATE,
            Capability.PROGRESS_ON_POLLING_THREAD);

    public TcpVerbsProvider() {
        super(NAME, "RC verbs over one TCP connection per queue pair (portable, no RDMA hardware needed)", CAPABILITIES);
    }

    @Override
    public Set<String> deviceProperties() {
        return Set.of(PROGRESS, SPIN_MICROS, CONGESTION, RECEIVE_CREDITS);
    }

    @Override
    protected Device openDevice(DeviceOptions options) {
        return new TcpDevice(options);
    }
}
