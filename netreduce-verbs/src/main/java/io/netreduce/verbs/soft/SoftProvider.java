package io.netreduce.verbs.soft;

import io.netreduce.verbs.Capability;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.support.ProviderBase;
import io.netty.channel.epoll.Epoll;
import java.util.Set;

/**
 * The "soft" provider: RoCEv2 Reliable Connection emulated in user space over UDP on
 * Linux (Netty's native epoll transport). Needs no RDMA hardware and no privileges.
 */
public final class SoftProvider extends ProviderBase {
    public static final String NAME = "soft";

    /** Real RoCEv2 packets over UDP, through the gateway when one is set. */
    public static final TransportCapabilities CAPABILITIES = TransportCapabilities.of(NAME, Capability.ROCE_V2_FRAMES,
            Capability.GATEWAY_NEXT_HOP, Capability.INJECTED_FAULTS, Capability.PATH_MTU_PACKETS,
            Capability.RDMA_WRITE_WITH_IMMEDIATE, Capability.PROGRESS_ON_POLLING_THREAD);

    public SoftProvider() {
        super(NAME, "user-space RoCEv2 RC over UDP datagrams (real RoCE frames, port 4791)", CAPABILITIES);
    }

    @Override
    public String unavailableReason() {
        if (!Epoll.isAvailable()) {
            Throwable cause = Epoll.unavailabilityCause();
            return "Netty's native epoll transport is unavailable (Linux x86_64 only): "
                    + (cause != null ? cause.getMessage() : "unknown reason");
        }
        return null;
    }

    @Override
    public Set<String> deviceProperties() {
        return SoftProperties.ALL;
    }

    @Override
    protected Device openDevice(DeviceOptions options) {
        return new SoftDevice(options);
    }
}
