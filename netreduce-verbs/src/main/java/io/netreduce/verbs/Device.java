package io.netreduce.verbs;

/**
 * An opened device (ibverbs' {@code ibv_context}): the root of protection domains and
 * completion queues. Closing it closes everything created from it.
 */
public interface Device extends AutoCloseable {

    /** Name of the provider that opened it ("soft", "tcp", "disni"). */
    String providerName();

    DeviceOptions options();

    /** What this device's transport can do (its provider's {@link VerbsProvider#capabilities()}). */
    TransportCapabilities capabilities();

    ProtectionDomain allocateProtectionDomain();

    CompletionQueue createCompletionQueue(int capacity);

    /** Device-wide counters (drops that belong to no queue pair, e.g. unknown QPN or bad ICRC). */
    Counters counters();

    @Override
    void close();
}
