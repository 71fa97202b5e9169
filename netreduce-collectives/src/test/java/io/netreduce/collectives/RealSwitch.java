package io.netreduce.collectives;

import io.netreduce.netswitch.SwitchServer;
import java.net.InetSocketAddress;
import java.net.URI;

/** The software NetReduce switch started on 127.0.0.100 (any free ports) for tests over packet transports. */
public final class RealSwitch implements AutoCloseable {
    private final SwitchServer server;

    private RealSwitch(SwitchServer server) {
        this.server = server;
    }

    public static RealSwitch start(long memoryBudget) throws java.io.IOException {
        return new RealSwitch(SwitchServer.start(new InetSocketAddress("127.0.0.100", 0),
                new InetSocketAddress("127.0.0.1", 0), memoryBudget));
    }

    public InetSocketAddress data() {
        return server.dataAddress();
    }

    public SwitchServer server() {
        return server;
    }

    public URI control() {
        return URI.create("http://127.0.0.1:" + server.controlAddress().getPort());
    }

    @Override
    public void close() {
        server.close();
    }
}
