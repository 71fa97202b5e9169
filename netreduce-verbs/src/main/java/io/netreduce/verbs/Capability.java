package io.netreduce.verbs;

/**
 * One thing a transport can do that the layers above may depend on. Algorithm choice asks
 * for capabilities, never for a provider's name, so a wrapping provider (a meter, a fault
 * injector) or a new transport is judged by what it does.
 */
public enum Capability {
    /**
     * Every message crosses the wire as RoCEv2 packets (BTH with PSN, the INA header in a
     * message's first packet, ICRC), the stream a NetReduce switch parses and splices.
     */
    ROCE_V2_FRAMES("messages cross the wire as RoCEv2 packets a NetReduce switch can splice"),
    /**
     * Every packet goes to {@link DeviceOptions#gateway()} when one is set, so a software
     * switch on another address sits on the path. A transport with RoCEv2 frames but no
     * gateway (a NIC) relies on the fabric putting the switch on the path.
     */
    GATEWAY_NEXT_HOP("sends every packet through the configured gateway"),
    /**
     * Loses, duplicates, reorders and corrupts packets as {@link DeviceOptions#egressFaults()}
     * and {@link DeviceOptions#ingressFaults()} say, seeded, for loss tests and demos.
     */
    INJECTED_FAULTS("injects seeded packet loss, duplication, reordering and corruption"),
    /** Messages are cut into packets of the queue pair's path MTU, as an RC NIC cuts them. */
    PATH_MTU_PACKETS("packetizes messages at the path MTU"),
    /** RDMA WRITE and RDMA WRITE with immediate, besides SEND and SEND with immediate. */
    RDMA_WRITE_WITH_IMMEDIATE("RDMA WRITE and WRITE with immediate"),
    /**
     * Can move the data on the thread that polls the completion queue, when asked with
     * {@link DeviceOptions.Builder#callerPolls(boolean)}: no hand-over between threads.
     */
    PROGRESS_ON_POLLING_THREAD("moves data on the thread that polls the completion queue"),
    /**
     * Registering memory pins its pages with the kernel: slow, and bounded by the locked-memory
     * limit, so callers should register once and reuse. Without it registration is bookkeeping.
     */
    REGISTRATION_PINS_MEMORY("registration pins memory (costly, bounded by ulimit -l)");

    private final String description;

    Capability(String description) {
        this.description = description;
    }

    public String description() {
        return description;
    }
}
