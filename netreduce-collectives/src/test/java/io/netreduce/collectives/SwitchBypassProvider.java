package io.netreduce.collectives;

import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.VerbsProvider;
import io.netreduce.verbs.soft.SoftProvider;

/**
 * A misrouted fabric, for tests: the soft provider's real RoCEv2 devices, claiming its
 * capabilities (RoCEv2 packets through the gateway), but opened without the gateway, so
 * every packet goes straight to the peer around the switch the communicator configured.
 * Registered as "switch-bypass" in this module's test class path only.
 */
public final class SwitchBypassProvider implements VerbsProvider {
    public static final String NAME = "switch-bypass";
    private final SoftProvider soft = new SoftProvider();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "test: soft RoCEv2 devices that ignore their gateway (packets bypass the switch)";
    }

    @Override
    public TransportCapabilities capabilities() {
        return soft.capabilities().named(NAME);
    }

    @Override
    public String unavailableReason() {
        return soft.unavailableReason();
    }

    @Override
    public Device open(DeviceOptions options) {
        return soft.open(DeviceOptions.Builder.from(options).gateway(null).build());
    }
}
