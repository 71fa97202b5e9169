package io.netreduce.testkit.inproc;

import io.netreduce.verbs.Capability;
import io.netreduce.verbs.Device;
import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.TransportCapabilities;
import io.netreduce.verbs.VerbsException;
import io.netreduce.verbs.support.ProviderBase;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test-scope verbs provider ("inproc") whose devices live in one JVM and move messages
 * by copying between registered buffers at post time: a reliable, in-order RC model with no
 * wire. A send to a peer with no receive posted waits for one (as infinite RNR retry does);
 * a send to a closed peer fails with RETRY_EXC_ERR (as a dead peer does). A copy onto the
 * same bytes is skipped, so a queue pair connected to itself running an in-place operation
 * "completes instantly": the host-cost benchmark uses that. A device whose gateway is an
 * {@link InprocSwitch} sends through it.
 */
public final class InprocProvider extends ProviderBase {
    public static final String NAME = "inproc";

    static final ConcurrentHashMap<InetSocketAddress, InprocDevice> DEVICES = new ConcurrentHashMap<>();
    private static final AtomicInteger NEXT_PORT = new AtomicInteger(20000);

    /**
     * Stands in for RoCEv2 through a gateway: messages sent with a gateway go to the
     * in-process switch stand-in, which aggregates them.
     */
    public static final TransportCapabilities CAPABILITIES = TransportCapabilities.of(NAME, Capability.ROCE_V2_FRAMES,
            Capability.GATEWAY_NEXT_HOP);

    public InprocProvider() {
        super(NAME, "in-process test transport (copies between registered buffers)", CAPABILITIES);
    }

    @Override
    protected Device openDevice(DeviceOptions options) {
        int port = options.port() == 0 ? NEXT_PORT.incrementAndGet() : options.port();
        InetSocketAddress address = new InetSocketAddress(options.localAddress(), port);
        InprocDevice device = new InprocDevice(options, address);
        if (DEVICES.putIfAbsent(address, device) != null) {
            throw new VerbsException("inproc device address already in use: " + address);
        }
        return device;
    }

    static InprocDevice device(InetSocketAddress address) {
        return DEVICES.get(address);
    }
}
