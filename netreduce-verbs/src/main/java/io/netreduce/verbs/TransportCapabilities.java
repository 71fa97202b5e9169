package io.netreduce.verbs;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * What one transport can do: its name (for messages to people, never for decisions) and
 * its {@link Capability capabilities}. Immutable.
 */
public final class TransportCapabilities {
    private final String transport;
    private final Set<Capability> capabilities;

    private TransportCapabilities(String transport, EnumSet<Capability> capabilities) {
        this.transport = Objects.requireNonNull(transport, "transport");
        this.capabilities = Collections.unmodifiableSet(capabilities);
    }

    public static TransportCapabilities of(String transport, Capability... capabilities) {
        EnumSet<Capability> set = EnumSet.noneOf(Capability.class);
        Collections.addAll(set, capabilities);
        return new TransportCapabilities(transport, set);
    }

    /** The same capabilities under another transport name (a provider wrapping this one). */
    public TransportCapabilities named(String name) {
        EnumSet<Capability> set = EnumSet.noneOf(Capability.class);
        set.addAll(capabilities);
        return new TransportCapabilities(name, set);
    }

    /** The transport's name, to put in messages. */
    public String transport() {
        return transport;
    }

    public boolean has(Capability c) {
        return capabilities.contains(c);
    }

    public Set<Capability> all() {
        return capabilities;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TransportCapabilities t && t.transport.equals(transport)
                && t.capabilities.equals(capabilities);
    }

    @Override
    public int hashCode() {
        return transport.hashCode() * 31 + capabilities.hashCode();
    }

    @Override
    public String toString() {
        return transport + " " + capabilities;
    }
}
