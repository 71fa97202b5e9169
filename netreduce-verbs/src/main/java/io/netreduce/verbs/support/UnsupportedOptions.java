package io.netreduce.verbs.support;

import io.netreduce.verbs.Capability;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.VerbsException;

/**
 * The one rule for device options a transport cannot honour: it refuses them when the
 * device opens, rather than ignore them and do something else than the caller meant.
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
}
