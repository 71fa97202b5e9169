package io.netreduce.verbs.soft;

import io.netreduce.verbs.Capability;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.VerbsProvider;
import io.netty.channel.epoll.Epoll;
import java.util.Objects;

/**
 * The "soft" provider: RoCEv2 Reliable Connection emulated in user space over UDP on
 * Linux (Netty's native epoll transport). Needs no RDMA hardware and no privileges.
 */
public final class SoftProvider implements VerbsProvider {
    public static final String NAME = "soft";

    /** Real RoCEv2 packets over UDP, through the gateway when one is set. */
    public static final TransportCapabilities CAPABILITIES = TransportCapabilities.of(NAME, Capability.ROCE_V2_FRAMES,
            Capability.GATEWAY_NEXT_HOP, Capability.INJECTED_FAULTS, Capability.PATH_MTU_PACKETS,
            Capability.RDMA_WRITE_WITH_IMMEDIATE);

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public TransportCapabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public String description() {
        return "user-space RoCEv2 RC over UDP datagrams (real RoCE frames, port 4791)";
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
    public Device open(DeviceOptions options) {
        Objects.requireNonNull(options, "options");
        String reason = unavailableReason();
        if (reason != null) {
            throw new io.netreduce.verbs.VerbsException("verbs provider 'soft' cannot start: " + reason);
        }
        return new SoftDevice(options);
    }
}
