package io.netreduce.cli.allreduce;

import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.wire.control.ControlPaths;
import io.netreduce.wire.control.SwitchControlClient;
import java.net.URI;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The switch's data-plane CPU time, read from its control plane's metrics
 * ({@value ControlPaths#DATAPLANE_CPU_METRIC}) before and after a timed loop, so that a
 * netreduce row reports the switch's CPU per call beside the workers' (which never include
 * it). Only rank 0 reads it ({@link WorkerLoop}); a switch that cannot be read gives
 * "unknown" with one warning, never a wrong figure.
 */
public final class SwitchCpu {
    /** Nothing to read: every sample is unknown. */
    public static final SwitchCpu NONE = new SwitchCpu(null);
    private static final Logger LOG = LoggerFactory.getLogger(SwitchCpu.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    private final SwitchControlClient client;
    private boolean warned;

    private SwitchCpu(SwitchControlClient client) {
        this.client = client;
    }

    /** Reads the switch of a netreduce communicator's {@code config}; {@link #NONE} for other algorithms. */
    public static SwitchCpu of(CommunicatorConfig config) {
        URI control = config.switchControl();
        if (control == null || !CommunicatorConfig.NETREDUCE.equals(config.algorithm())) {
            return NONE;
        }
        return new SwitchCpu(new SwitchControlClient(control, TIMEOUT));
    }

    /** The data plane's CPU time so far in nanoseconds, or -1 when unknown. */
    public long nanos() {
        if (client == null) {
            return -1;
        }
        try {
            return parse(client.metrics());
        } catch (SwitchControlClient.Refused | RuntimeException e) {
            if (!warned) {
                warned = true;
                LOG.warn("cannot read the switch's data-plane CPU from {}: {} (its column stays empty)",
                        client.base(), e.toString());
            }
            return -1;
        }
    }

    /** The metric's value in nanoseconds from Prometheus text, -1 if absent; 0 means the switch cannot tell. */
    static long parse(String metrics) {
        String name = ControlPaths.DATAPLANE_CPU_METRIC + ' ';
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name)) {
                double seconds = Double.parseDouble(line.substring(name.length()).trim());
                return seconds > 0 ? Math.round(seconds * 1e9) : -1;
            }
        }
        return -1;
    }

    /** CPU seconds per call between two samples of {@link #nanos}, NaN when either is unknown. */
    public static double perCall(long before, long after, int calls) {
        return before < 0 || after < before || calls <= 0 ? Double.NaN : (after - before) / 1e9 / calls;
    }
}
