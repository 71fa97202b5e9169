package io.netreduce.verbs.conformance;

import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsProvider;
import java.time.Duration;

/**
 * What the conformance suite needs to know about one provider. A provider runs the suite
 * by subclassing {@link VerbsConformanceTest} and returning a fixture; usually only
 * {@link #providerName()} must be given, the rest has defaults that fit a software
 * provider on loopback.
 */
public abstract class ProviderFixture {

    /** The name the provider is registered under ("soft", "tcp", "disni"). */
    public abstract String providerName();

    /**
     * Options of emulated host {@code host} (0, 1, ...): by default address 127.0.0.(10+host)
     * with port 0 (the provider picks one where it can; override to use a fixed port such as
     * {@link DeviceOptions#ROCE_PORT}).
     */
    public DeviceOptions optionsFor(int host) {
        return DeviceOptions.builder().localAddress("127.0.0." + (10 + host)).port(0).build();
    }

    /** Whether the provider honours {@link io.netreduce.verbs.FaultPlan}s (the soft provider does). */
    public boolean supportsFaults() {
        return false;
    }

    /**
     * Null when the suite can run here, otherwise why not; the suite then reports every
     * test as skipped with this reason. Defaults to the provider's own
     * {@link VerbsProvider#unavailableReason()}.
     */
    public String skipReason() {
        for (VerbsProvider p : Verbs.providers()) {
            if (p.name().equalsIgnoreCase(providerName())) {
                return p.unavailableReason();
            }
        }
        return "no verbs provider named '" + providerName() + "' is registered";
    }

    /** Opens the device of emulated host {@code host} through provider selection by name. */
    public Device open(int host) {
        return Verbs.open(providerName(), optionsFor(host));
    }

    /**
     * Whether the provider maintains transport counters (messages, bytes, RNR NAKs). A
     * hardware provider cannot see inside the NIC and may answer false.
     */
    public boolean countsTransportEvents() {
        return true;
    }

    /** Deadline for connecting a queue pair to its peer. */
    public Duration connectTimeout() {
        return Duration.ofSeconds(10);
    }

    /**
     * How long after its peer vanished a queue pair may take to report it. A connection-based
     * provider sees it at once; a datagram one needs ackTimeout × (retryCount + 1).
     */
    public Duration peerLossDeadline() {
        return Duration.ofSeconds(5);
    }

    /**
     * Tunes queue-pair attributes for this provider (e.g. a short ACK timeout so that
     * peer-loss tests finish quickly). The suite applies its own settings afterwards only
     * where a test needs them.
     */
    public QpAttributes.Builder tune(QpAttributes.Builder builder) {
        return builder;
    }
}
