package io.netreduce.collectives;

import java.lang.reflect.Method;
import java.net.InetSocketAddress;
import java.net.URI;

/**
 * The software NetReduce switch (netreduce-switch's {@code io.netreduce.netswitch.SwitchServer})
 * started on 127.0.0.100 for tests over real packet transports. Reached by reflection so
 * that this module's tests compile whether or not that class is on the class path yet; a
 * test that needs it and cannot find it fails saying so.
 */
public final class RealSwitch implements AutoCloseable {
    private static final String CLASS = "io.netreduce.netswitch.SwitchServer";

    private final AutoCloseable server;
    private final InetSocketAddress data;
    private final URI control;

    private RealSwitch(AutoCloseable server, InetSocketAddress data, URI control) {
        this.server = server;
        this.data = data;
        this.control = control;
    }

    public static RealSwitch start(long memoryBudget) throws Exception {
        Class<?> c;
        try {
            c = Class.forName(CLASS);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("the software switch (" + CLASS + ") is not on the class path", e);
        }
        Method start = c.getMethod("start", InetSocketAddress.class, InetSocketAddress.class, long.class);
        AutoCloseable s = (AutoCloseable) start.invoke(null, new InetSocketAddress("127.0.0.100", 0),
                new InetSocketAddress("127.0.0.1", 0), memoryBudget);
        InetSocketAddress data = (InetSocketAddress) c.getMethod("dataAddress").invoke(s);
        InetSocketAddress control = (InetSocketAddress) c.getMethod("controlAddress").invoke(s);
        return new RealSwitch(s, data, URI.create("http://127.0.0.1:" + control.getPort()));
    }

    public InetSocketAddress data() {
        return data;
    }

    public URI control() {
        return control;
    }

    @Override
    public void close() throws Exception {
        server.close();
    }
}
