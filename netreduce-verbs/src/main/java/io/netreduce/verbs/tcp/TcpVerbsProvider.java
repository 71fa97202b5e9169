package io.netreduce.verbs.tcp;

import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.VerbsProvider;
import java.util.Objects;

/**
 * Reliable-Connection verbs over one TCP connection per queue pair: the portable fallback
 * that runs anywhere a JVM does, with RC semantics (ordered, acknowledged, RNR and error
 * behaviour as ibverbs reports it) but no in-network aggregation.
 */
public final class TcpVerbsProvider implements VerbsProvider {
    public static final String NAME = "tcp";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String description() {
        return "RC verbs over one TCP connection per queue pair (portable, no RDMA hardware needed)";
    }

    @Override
    public String unavailableReason() {
        return null;
    }

    @Override
    public Device open(DeviceOptions options) {
        return new TcpDevice(Objects.requireNonNull(options, "options"));
    }
}
