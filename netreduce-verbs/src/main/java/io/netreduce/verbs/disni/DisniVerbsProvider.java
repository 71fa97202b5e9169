package io.netreduce.verbs.disni;

import io.netreduce.verbs.Capability;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.support.ProviderBase;

/**
 * Real RDMA (RoCE, InfiniBand, iWARP, or Soft-RoCE) through DiSNI 2.1's Java binding of
 * libibverbs and librdmacm. Needs libdisni.so, rdma-core and an RDMA device; when any is
 * missing {@link #unavailableReason()} says which and how to fix it, and {@link #open}
 * fails at once with the same words.
 */
public final class DisniVerbsProvider extends ProviderBase {
    public static final String NAME = "disni";

    /** A NIC: RoCEv2 packets on a RoCE port (the fabric, not a gateway, puts a switch on the path); pinned memory. */
    public static final TransportCapabilities CAPABILITIES = TransportCapabilities.of(NAME, Capability.ROCE_V2_FRAMES,
            Capability.PATH_MTU_PACKETS, Capability.RDMA_WRITE_WITH_IMMEDIATE, Capability.REGISTRATION_PINS_MEMORY);

    public DisniVerbsProvider() {
        super(NAME, "real RDMA through DiSNI (libibverbs + librdmacm); needs libdisni.so and an RDMA device", CAPABILITIES);
    }

    @Override
    public String unavailableReason() {
        return DisniAvailability.unavailableReason();
    }

    @Override
    protected Device openDevice(DeviceOptions options) {
        return new DisniDevice(options);
    }
}
