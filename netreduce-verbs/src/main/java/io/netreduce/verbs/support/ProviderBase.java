package io.netreduce.verbs.support;

import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.VerbsProvider;
import java.util.Objects;

/**
 * What every provider does the same way: its name, description and capabilities, and an
 * {@link #open} that refuses at once, in the same words everywhere, a provider that cannot
 * run here, options it cannot honour and properties it does not read, before the provider
 * opens its device.
 */
public abstract class ProviderBase implements VerbsProvider {
    private final String name;
    private final String description;
    private final TransportCapabilities capabilities;

    protected ProviderBase(String name, String description, TransportCapabilities capabilities) {
        this.name = name;
        this.description = description;
        this.capabilities = capabilities;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final String description() {
        return description;
    }

    @Override
    public final TransportCapabilities capabilities() {
        return capabilities;
    }

    /** Null: the provider can run anywhere, unless it says otherwise. */
    @Override
    public String unavailableReason() {
        return null;
    }

    @Override
    public final Device open(DeviceOptions options) {
        Objects.requireNonNull(options, "options");
        String reason = unavailableReason();
        if (reason != null) {
            throw new VerbsException("verbs provider '" + name + "' cannot start: " + reason);
        }
        UnsupportedOptions.refuse(capabilities, options);
        for (String key : options.properties().keySet()) {
            String why = UnsupportedOptions.unknownProperty(this, key);
            if (why != null) {
                throw new VerbsException(why);
            }
        }
        return openDevice(options);
    }

    /** Opens the device, once the options are known to be ones this provider honours. */
    protected abstract Device openDevice(DeviceOptions options);
}
