package io.netreduce.examples.launch;

import io.netreduce.collectives.EnvironmentVariables;

import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.netswitch.SwitchServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The software NetReduce switch of the local demo setup, started in this JVM on its own
 * loopback address with ephemeral ports, plus the settings that point workers at it
 * (as a config builder for in-process communicators, or as NETREDUCE_* variables for
 * worker processes).
 */
public final class LocalSwitch implements AutoCloseable {

    /** Loopback address of the switch's data plane (workers use 127.0.0.2 and up). */
    public static final String DATA_ADDRESS = "127.0.0.100";
    private static final long MEMORY_BUDGET = 64L << 20;

    private final SwitchServer server;

    private LocalSwitch(SwitchServer server) {
        this.server = server;
    }

    public static LocalSwitch start() {
        try {
            return new LocalSwitch(SwitchServer.start(new InetSocketAddress(DATA_ADDRESS, 0),
                    new InetSocketAddress("127.0.0.1", 0), MEMORY_BUDGET));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the software switch on " + DATA_ADDRESS, e);
        }
    }

    public InetSocketAddress dataAddress() {
        return server.dataAddress();
    }

    public java.net.URI controlUri() {
        InetSocketAddress c = server.controlAddress();
        return java.net.URI.create("http://" + c.getHostString() + ":" + c.getPort());
    }

    /** Points a communicator configuration at this switch. */
    public CommunicatorConfig.Builder configure(CommunicatorConfig.Builder builder) {
        return builder.switchAddress(dataAddress()).switchControl(controlUri());
    }

    /** The same settings as environment variables for a worker process. */
    public Map<String, String> environment() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put(EnvironmentVariables.SWITCH, dataAddress().getHostString() + ":" + dataAddress().getPort());
        env.put(EnvironmentVariables.SWITCH_CONTROL, controlUri().toString());
        return env;
    }

    @Override
    public void close() {
        server.close();
    }
}
