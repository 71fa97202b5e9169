package io.netreduce.netswitch;

import io.netreduce.netswitch.control.ControlPlane;
import io.netreduce.netswitch.dataplane.DataPlane;
import io.netreduce.netswitch.engine.AggregationEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * A running software NetReduce switch: the aggregation engine behind a UDP data plane and an
 * HTTP control plane. {@link #start} is the programmatic API (tests, the CLI's
 * {@code netreduce switch}); {@link #main} runs one until the process is stopped.
 */
public final class SwitchServer implements AutoCloseable {
    public static final long DEFAULT_MEMORY_BUDGET = 256L << 20;
    private static final Logger LOG = LoggerFactory.getLogger(SwitchServer.class);

    private final AggregationEngine engine;
    private final DataPlane dataPlane;
    private final ControlPlane controlPlane;

    private SwitchServer(AggregationEngine engine, DataPlane dataPlane, ControlPlane controlPlane) {
        this.engine = engine;
        this.dataPlane = dataPlane;
        this.controlPlane = controlPlane;
    }

    /**
     * Starts a switch whose data plane listens on {@code data} (normally its own address, port
     * 4791) and whose control plane serves HTTP on {@code control}; rings may reserve up to
     * {@code memoryBudgetBytes} of aggregator memory in total.
     */
    public static SwitchServer start(InetSocketAddress data, InetSocketAddress control, long memoryBudgetBytes)
            throws IOException {
        return start(data, control, memoryBudgetBytes, true);
    }

    /** As {@link #start(InetSocketAddress, InetSocketAddress, long)}; {@code nativeIo} false keeps the Netty data plane. */
    public static SwitchServer start(InetSocketAddress data, InetSocketAddress control, long memoryBudgetBytes,
                                     boolean nativeIo) throws IOException {
        AggregationEngine engine = new AggregationEngine(memoryBudgetBytes);
        DataPlane dp = DataPlane.open(engine, data, nativeIo);
        try {
            ControlPlane cp = new ControlPlane(engine, control);
            LOG.info("NetReduce switch up: data {}, control {}, aggregator memory budget {} bytes",
                    dp.localAddress(), cp.localAddress(), memoryBudgetBytes);
            return new SwitchServer(engine, dp, cp);
        } catch (IOException | RuntimeException e) {
            dp.close();
            throw e;
        }
    }

    public AggregationEngine engine() {
        return engine;
    }

    public InetSocketAddress dataAddress() {
        return dataPlane.localAddress();
    }

    public InetSocketAddress controlAddress() {
        return controlPlane.localAddress();
    }

    @Override
    public void close() {
        controlPlane.close();
        dataPlane.close();
        LOG.info("NetReduce switch stopped");
    }
}
