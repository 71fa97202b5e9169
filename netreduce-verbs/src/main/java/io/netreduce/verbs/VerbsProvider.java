package io.netreduce.verbs;

import java.util.Set;

/**
 * A verbs implementation, registered in
 * {@code META-INF/services/io.netreduce.verbs.VerbsProvider} and found by name through
 * {@link Verbs#provider(String)}.
 */
public interface VerbsProvider {

    /** Short name users select it by: "soft", "tcp", "disni". */
    String name();

    /** One line on what it is, for listings. */
    String description();

    /**
     * Null when the provider can run here; otherwise why not and how to fix it (a missing
     * native library, no RDMA device, ...).
     */
    String unavailableReason();

    /**
     * What this transport can do, whether or not it can run here. Layers above decide by
     * these, never by {@link #name()}.
     */
    TransportCapabilities capabilities();

    /**
     * The {@link DeviceOptions#properties()} keys this provider reads: its own settings,
     * such as {@code tcp.spinMicros}. A device refuses any other key, so that a misspelt
     * setting fails instead of being ignored.
     */
    default Set<String> deviceProperties() {
        return Set.of();
    }

    /** Opens a device; throws {@link VerbsException} saying what is wrong if it cannot. */
    Device open(DeviceOptions options);
}
