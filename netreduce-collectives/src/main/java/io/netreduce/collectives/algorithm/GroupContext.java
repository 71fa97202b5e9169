package io.netreduce.collectives.algorithm;

import io.netreduce.collectives.EnvironmentVariables;

import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.rendezvous.StoreClient;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.Verbs;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

/**
 * What an algorithm gets when it joins a group: the configuration, this rank's place, the
 * transport's capabilities, which ranks share hosts, and a private corner of the rendezvous
 * store to set itself up through (each join attempt its own key prefix, so a fallback after a
 * failed attempt never reads the failed one's keys).
 *
 * <p>The group may be a part of the communicator's ({@link #across}): then {@link #rank()}
 * and {@link #size()} are this rank's place in the part, while the device address and the
 * failure messages stay those of the communicator's rank.
 */
public final class GroupContext {
    private final CommunicatorConfig config;
    private final StoreClient store;
    private final String prefix;
    private final TransportCapabilities transport;
    private final HostLayout layout;
    private final int rank;
    private final int size;

    public GroupContext(CommunicatorConfig config, StoreClient store, int attempt, HostLayout layout) {
        this(config, store, "join/" + attempt + "/", layout, config.rank(), config.worldSize());
    }

    private GroupContext(CommunicatorConfig config, StoreClient store, String prefix, HostLayout layout, int rank,
                         int size) {
        this.config = config;
        this.store = store;
        this.prefix = prefix;
        this.transport = Verbs.provider(config.transport()).capabilities();
        this.layout = layout;
        this.rank = rank;
        this.size = size;
    }

    /**
     * The group of the ranks at this rank's local position on every host, one per host, in
     * host order: where a hierarchical algorithm runs its inter-host part.
     */
    public GroupContext across() {
        int me = config.rank();
        return new GroupContext(config, store, prefix + "across-" + layout.localRank(me) + "/", layout,
                layout.host(me), layout.hosts());
    }

    /** Which ranks of the communicator share hosts. */
    public HostLayout hosts() {
        return layout;
    }

    /** A key of this join attempt's corner of the store, for {@link #publish}/{@link #await} by other parts. */
    public String key(String name) {
        return prefix + name;
    }

    public CommunicatorConfig config() {
        return config;
    }

    /** This rank's place in the group (the communicator's rank unless this is a part of it). */
    public int rank() {
        return rank;
    }

    public int size() {
        return size;
    }

    public Duration timeout() {
        return config.timeout();
    }

    public TransportCapabilities transport() {
        return transport;
    }

    /** Publishes {@code value} under {@code key} for every rank of this join attempt. */
    public void publish(String key, String value) {
        store.set(prefix + key, value, config.timeout());
    }

    /**
     * A guard for waits during the join: it aborts as soon as any rank reports a failure
     * through the rendezvous store (another rank could not join), instead of waiting out the
     * timeout for data that rank will never send.
     */
    public ProgressGuard groupFailureGuard() {
        return idleNanos -> {
            String failure = store.failure();
            if (failure != null) {
                throw new HostException("rank " + config.rank() + ": the group failed while joining: " + failure);
            }
        };
    }

    /** Waits (up to the timeout) for the value another rank publishes under {@code key}. */
    public String await(String key) {
        return store.get(prefix + key, config.timeout());
    }

    /**
     * The configured egress faults, reseeded per rank so that ranks lose different packets
     * (the same seed on every rank would drop the same positions everywhere).
     */
    public FaultPlan rankFaults() {
        FaultPlan f = config.faults();
        return f.isNone() ? f : new FaultPlan(f.seed() * 31 + config.rank(), f.loss(), f.duplicate(), f.reorder(), f.corrupt());
    }

    /**
     * How many ranks of the group share this host: the launcher's count, else all of them
     * when the rendezvous is on loopback (one machine), else 1. Devices take it as a hint
     * for how to wait ({@link io.netreduce.verbs.DeviceOptions#hostPollers()}).
     */
    public int ranksOnThisHost() {
        if (config.localWorldSize() > 0) {
            return config.localWorldSize();
        }
        try {
            return InetAddress.getByName(config.masterAddress()).isLoopbackAddress() ? config.worldSize() : 1;
        } catch (UnknownHostException e) {
            return 1;
        }
    }

    /**
     * The address this rank's device binds: the configured one, else prefix.(rank+2)
     * (127.0.0.(rank+2) by default) when the master is on loopback, so that every rank of a
     * single-machine group is its own emulated host, else this host's address.
     */
    public String localAddress() {
        if (config.localAddress() != null) {
            return config.localAddress();
        }
        try {
            if (InetAddress.getByName(config.masterAddress()).isLoopbackAddress()) {
                if (config.rank() > 250) {
                    throw new IllegalArgumentException("more than 251 ranks on one machine: set " + EnvironmentVariables.LOCAL_ADDR);
                }
                return config.loopbackPrefix() + (config.rank() + 2);
            }
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("cannot resolve " + config.masterAddress() + ": set " + EnvironmentVariables.LOCAL_ADDR,
                    e);
        }
    }
}
