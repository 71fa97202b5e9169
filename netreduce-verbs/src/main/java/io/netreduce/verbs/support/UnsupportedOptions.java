package io.netreduce.verbs.support;

import io.netreduce.verbs.Capability;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.VerbsProvider;
import java.util.Set;
import java.util.TreeSet;

/**
 * The one rule for device options a transport cannot honour, and for device properties it
 * does not read: it refuses them when the device opens, rather than ignore them and do
 * something else than the caller meant.
 */
public final class UnsupportedOptions {
    private UnsupportedOptions() {
    }

    /**
     * Throws if {@code options} ask for a gateway or injected faults the transport cannot
     * provide. A transport that ignored a gateway would reach its peers directly, around the
     * switch the caller meant to put on the path, and in-network aggregation would silently
     * not happen; one that ignored a fault plan would report a loss test as passed.
     */
    public static void refuse(TransportCapabilities transport, DeviceOptions options) {
        if (options.gateway() != null && !transport.has(Capability.GATEWAY_NEXT_HOP)) {
            throw new VerbsException("transport '" + transport.transport() + "' cannot send through the gateway "
                    + options.gateway() + ": it reaches its peers directly, so a switch there would be bypassed; "
                    + "open the device without a gateway, or use a transport that routes through one");
        }
        if ((!options.egressFaults().isNone() || !options.ingressFaults().isNone())
                && !transport.has(Capability.INJECTED_FAULTS)) {
            throw new VerbsException("transport '" + transport.transport() + "' cannot inject faults ("
                    + (options.egressFaults().isNone() ? "" : "egress " + options.egressFaults() + " ")
                    + (options.ingressFaults().isNone() ? "" : "ingress " + options.ingressFaults())
                    + "): it has no packets of its own to lose; use a transport with packets (soft) for loss tests");
        }
    }

    /**
     * Why {@code provider} refuses device property {@code key} ({@link DeviceOptions#properties()}),
     * or null if it reads it: a misspelt setting ignored would leave the caller measuring or
     * running something else than they meant. One message for the device's open and for
     * callers that check before they start anything.
     */
    public static String unknownProperty(VerbsProvider provider, String key) {
        Set<String> known = provider.deviceProperties();
        return known.contains(key) ? null : "transport '" + provider.name() + "' has no device property '" + key
                + "' (" + (known.isEmpty() ? "it reads none" : "it reads " + String.join(", ", new TreeSet<>(known))) + ")";
    }
}
