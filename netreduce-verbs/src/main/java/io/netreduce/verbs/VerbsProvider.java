package io.netreduce.verbs;

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

    /** Opens a device; throws {@link VerbsException} saying what is wrong if it cannot. */
    Device open(DeviceOptions options);
}
