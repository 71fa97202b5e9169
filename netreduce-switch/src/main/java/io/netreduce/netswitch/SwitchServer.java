package io.netreduce.netswitch;

import io.netreduce.netswitch.control.ControlPlane;
import io.netreduce.netswitch.dataplane.DataPlane;
import io.netreduce.netswitch.engine.AggregationEngine;
import io.netreduce.verbs.DeviceOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;

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
        AggregationEngine engine = new AggregationEngine(memoryBudgetBytes);
        DataPlane dp = new DataPlane(engine, data);
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

    /**
     * {@code SwitchServer [--data ADDR[:PORT]] [--control ADDR:PORT] [--memory SIZE]}; defaults
     * 127.0.0.100:4791, 127.0.0.1:7100 and 256m.
     */
    public static void main(String[] args) throws Exception {
        InetSocketAddress data = new InetSocketAddress("127.0.0.100", DeviceOptions.ROCE_PORT);
        InetSocketAddress control = new InetSocketAddress("127.0.0.1", 7100);
        long memory = DEFAULT_MEMORY_BUDGET;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("-h") || a.equals("--help")) {
                System.out.println("usage: SwitchServer [--data ADDR[:PORT]] [--control ADDR:PORT] [--memory SIZE]");
                return;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("missing value after " + a);
            }
            String v = args[++i];
            switch (a) {
                case "--data" -> data = parseAddress(v, DeviceOptions.ROCE_PORT);
                case "--control" -> control = parseAddress(v, 7100);
                case "--memory" -> memory = parseSize(v);
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        SwitchServer server = start(data, control, memory);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }));
        stopped.await();
    }

    /** "host:port" or "host" (with the default port). */
    public static InetSocketAddress parseAddress(String text, int defaultPort) {
        int colon = text.lastIndexOf(':');
        if (colon < 0) {
            return new InetSocketAddress(text, defaultPort);
        }
        return new InetSocketAddress(text.substring(0, colon), Integer.parseInt(text.substring(colon + 1)));
    }

    /** A byte count with an optional k/m/g suffix (binary units). */
    public static long parseSize(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        if (t.endsWith("k") || t.endsWith("m") || t.endsWith("g")) {
            unit = switch (t.charAt(t.length() - 1)) {
                case 'k' -> 1L << 10;
                case 'm' -> 1L << 20;
                default -> 1L << 30;
            };
            t = t.substring(0, t.length() - 1);
        }
        try {
            long v = Long.parseLong(t) * unit;
            if (v <= 0) {
                throw new IllegalArgumentException("size must be positive: " + text);
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a size: '" + text + "' (e.g. 256m)", e);
        }
    }
}
