package io.netreduce.netswitch.dataplane;

import io.netreduce.netswitch.engine.AggregationEngine;
import io.netreduce.wire.udp.NativeUdp;
import java.io.IOException;
import java.net.InetSocketAddress;
import org.slf4j.LoggerFactory;

/**
 * The switch's UDP port: one thread receives RoCEv2 datagrams on the switch's address (port
 * 4791), runs them through the {@link AggregationEngine} and sends what it emits to the
 * destination hosts. Two implementations of the same pipeline: {@link NativeDataPlane}
 * (batched I/O in native code, {@link NativeUdp}) where its library loads, else
 * {@link NettyDataPlane}; {@link #open} logs which runs and why.
 */
public interface DataPlane extends AutoCloseable {
    /** The data-plane thread's name (benchmarks read its CPU time). */
    String THREAD_NAME = "netreduce-switch-dataplane";
    /** System property: {@code false} sends every result as its own datagram (no UDP GSO). */
    String GSO_PROPERTY = "netreduce.switch.gso";
    /**
     * System property, Netty path only: {@code true} receives with UDP GRO (one {@code recvmsg}
     * per read, a sender's GSO batch in one piece) instead of {@code recvmmsg} batches. The
     * native path always receives with GRO, in batches.
     */
    String GRO_PROPERTY = "netreduce.switch.gro";

    /** Binds the data plane to {@code bind} on the fastest path this machine has. */
    static DataPlane open(AggregationEngine engine, InetSocketAddress bind) throws IOException {
        return open(engine, bind, true);
    }

    /** As {@link #open(AggregationEngine, InetSocketAddress)}; {@code allowNative} false keeps the Netty path. */
    static DataPlane open(AggregationEngine engine, InetSocketAddress bind, boolean allowNative) throws IOException {
        if (allowNative && NativeUdp.available()) {
            LoggerFactory.getLogger(DataPlane.class).info("switch data plane: {}", NativeUdp.describe());
            return new NativeDataPlane(engine, bind);
        }
        LoggerFactory.getLogger(DataPlane.class).info("switch data plane: {}", allowNative ? NativeUdp.describe()
                : "pure-Java UDP I/O through Netty (native I/O not asked for)");
        return new NettyDataPlane(engine, bind);
    }

    InetSocketAddress localAddress();

    /** Closes the socket and stops the thread, each within a deadline; never throws. */
    @Override
    void close();
}
