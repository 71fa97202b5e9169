package io.netreduce.verbs;

import io.netreduce.verbs.support.HostCores;
import io.netreduce.wire.roce.RoceAddressing;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * How to open a device: the local address it binds (one per emulated host, e.g.
 * 127.0.0.2), its port, an optional gateway (a next hop, such as a NetReduce switch, that
 * receives every datagram instead of the peer), injected faults for tests, and
 * provider-specific properties. Immutable; build with {@link #builder()}.
 */
public final class DeviceOptions {
    private final InetAddress localAddress;
    private final int port;
    private final InetSocketAddress gateway;
    private final FaultPlan egressFaults;
    private final FaultPlan ingressFaults;
    private final Map<String, String> properties;
    private final boolean callerPolls;
    private final int hostPollers;

    private DeviceOptions(Builder b) {
        this.localAddress = b.localAddress;
        this.port = b.port;
        this.gateway = b.gateway;
        this.egressFaults = b.egressFaults;
        this.ingressFaults = b.ingressFaults;
        this.properties = Map.copyOf(b.properties);
        this.callerPolls = b.callerPolls;
        this.hostPollers = b.hostPollers;
    }

    public static Builder builder() {
        return new Builder();
    }

    public InetAddress localAddress() { return localAddress; }
    /** Port the device listens on; 0 lets the provider choose (where it can). */
    public int port() { return port; }
    /** Next hop for every datagram, or null to send straight to the peer. */
    public InetSocketAddress gateway() { return gateway; }
    public FaultPlan egressFaults() { return egressFaults; }
    public FaultPlan ingressFaults() { return ingressFaults; }
    public Map<String, String> properties() { return properties; }
    /**
     * True if the application polls (or blocks on) the completion queue of every queue pair
     * it expects progress from, so a transport with
     * {@link Capability#PROGRESS_ON_POLLING_THREAD} may move the data on the polling thread
     * instead of threads of its own. A hint: providers without that capability ignore it,
     * and a provider's own setting for it, where the process gives one, wins.
     */
    public boolean callerPolls() { return callerPolls; }
    /**
     * How many threads on this host poll devices like this one (the ranks of a group that
     * share the machine; default 1). A hint for waiting: with more pollers than cores a
     * poller that busy-waits takes the core from the very peer it waits for, so a provider
     * that spins yields the core while it does.
     */
    public int hostPollers() { return hostPollers; }

    /** True if {@link #hostPollers()} exceeds the host's cores ({@link HostCores}: not one where a rank is bound). */
    public boolean coresOversubscribed() {
        return hostPollers > HostCores.count();
    }

    public String property(String key, String defaultValue) {
        return properties.getOrDefault(key, defaultValue);
    }

    @Override
    public String toString() {
        return "DeviceOptions{" + localAddress.getHostAddress() + ":" + port
                + (gateway != null ? ", gateway=" + gateway : "")
                + (egressFaults.isNone() ? "" : ", egress=" + egressFaults)
                + (ingressFaults.isNone() ? "" : ", ingress=" + ingressFaults)
                + (callerPolls ? ", caller polls" : "") + (hostPollers > 1 ? ", " + hostPollers + " pollers" : "")
                + (properties.isEmpty() ? "" : ", " + properties) + "}";
    }

    public static final class Builder {
        private InetAddress localAddress = InetAddress.getLoopbackAddress();
        private int port = RoceAddressing.UDP_PORT;
        private InetSocketAddress gateway;
        private FaultPlan egressFaults = FaultPlan.NONE;
        private FaultPlan ingressFaults = FaultPlan.NONE;
        private final Map<String, String> properties = new LinkedHashMap<>();
        private boolean callerPolls;
        private int hostPollers = 1;

        public Builder localAddress(InetAddress a) { localAddress = Objects.requireNonNull(a); return this; }

        public Builder localAddress(String a) {
            try {
                return localAddress(InetAddress.getByName(a));
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("unknown local address: " + a, e);
            }
        }

        public Builder port(int p) {
            if (p < 0 || p > 0xFFFF) {
                throw new IllegalArgumentException("port out of range: " + p);
            }
            port = p;
            return this;
        }

        public Builder gateway(InetSocketAddress g) { gateway = g; return this; }
        public Builder egressFaults(FaultPlan f) { egressFaults = Objects.requireNonNull(f); return this; }
        public Builder ingressFaults(FaultPlan f) { ingressFaults = Objects.requireNonNull(f); return this; }
        public Builder property(String k, String v) { properties.put(k, v); return this; }
        /** See {@link DeviceOptions#callerPolls()}. */
        public Builder callerPolls(boolean v) { callerPolls = v; return this; }

        /** See {@link DeviceOptions#hostPollers()}. */
        public Builder hostPollers(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("host pollers must be at least 1: " + n);
            }
            hostPollers = n;
            return this;
        }

        /** A builder holding {@code o}'s values, to change some of them. */
        public static Builder from(DeviceOptions o) {
            Builder b = new Builder().localAddress(o.localAddress).port(o.port).gateway(o.gateway)
                    .egressFaults(o.egressFaults).ingressFaults(o.ingressFaults).callerPolls(o.callerPolls)
                    .hostPollers(o.hostPollers);
            b.properties.putAll(o.properties);
            return b;
        }

        public DeviceOptions build() {
            return new DeviceOptions(this);
        }
    }
}
