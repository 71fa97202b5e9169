package io.netreduce.verbs.tcp;

import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.VerbsException;
import io.netreduce.wire.tcp.TcpCongestionControl;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The congestion control a device's connections get ({@link TcpVerbsProvider#CONGESTION}),
 * applied to each as it is installed. What runs is said once per process: the algorithm
 * and the system's default it replaces, or why the system's stays.
 */
final class TcpCongestion {
    static final String AUTO = "auto";
    static final String SYSTEM = "system";
    /** What {@link #AUTO} chooses where the system's default is {@link #PACED}. */
    static final String UNPACED = "cubic";
    static final String PACED = "bbr";
    private static final TcpSetting SETTING = new TcpSetting(TcpVerbsProvider.CONGESTION,
            TcpVerbsProvider.CONGESTION_ENVIRONMENT);
    private static final Logger LOG = LoggerFactory.getLogger(TcpCongestion.class);
    private static final AtomicBoolean SAID = new AtomicBoolean();

    /** The algorithm to set, or null to keep the system's. */
    private final String algorithm;
    private final String systemDefault;

    private TcpCongestion(String algorithm, String systemDefault) {
        this.algorithm = algorithm;
        this.systemDefault = systemDefault;
    }

    static TcpCongestion of(DeviceOptions options) {
        String value = SETTING.value(options);
        String system = TcpCongestionControl.systemDefault();
        String choice = value == null ? AUTO : value;
        String algorithm;
        if (choice.equals(SYSTEM)) {
            algorithm = null;
        } else if (choice.equals(AUTO)) {
            algorithm = PACED.equals(system) ? UNPACED : null;
        } else if (choice.matches("[a-z0-9_]{1,15}")) {
            algorithm = choice;
        } else {
            throw new VerbsException("tcp congestion control '" + value + "' in " + SETTING.source(options)
                    + " is not an algorithm's name (as in /proc/sys/net/ipv4/tcp_available_congestion_control), "
                    + AUTO + " or " + SYSTEM);
        }
        return new TcpCongestion(algorithm, system);
    }

    /** The algorithm set on connections, or null where they keep the system's. */
    String algorithm() {
        return algorithm;
    }

    /** Sets the chosen algorithm on a new connection; where that fails the connection keeps the system's. */
    void apply(SocketChannel channel) {
        if (algorithm == null || algorithm.equals(systemDefault)) {
            return;
        }
        String failure = TcpCongestionControl.set(channel, algorithm);
        if (SAID.compareAndSet(false, true)) {
            if (failure == null) {
                LOG.info("tcp connections use congestion control {} instead of the system's {} ({}={} keeps it)",
                        algorithm, systemDefault, TcpVerbsProvider.CONGESTION_ENVIRONMENT, SYSTEM);
            } else {
                LOG.warn("tcp connections keep the system's congestion control {}: setting {} failed: {}",
                        systemDefault, algorithm, failure);
            }
        } else if (failure != null) {
            LOG.debug("a tcp connection keeps the system's congestion control {}: setting {} failed: {}",
                    systemDefault, algorithm, failure);
        }
    }
}
