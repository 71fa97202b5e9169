package io.netreduce.cli;

import io.netreduce.cli.allreduce.Progress;
import io.netreduce.netswitch.SwitchServer;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;

/**
 * The software switch that {@code demo} and {@code bench --local} run inside their own
 * process: data plane on 127.0.0.100:4791 (a loopback address of its own, so it never
 * collides with the workers' devices on 127.0.0.2, .3, ...), control plane on a free port.
 */
final class DemoSwitch implements AutoCloseable {
    static final InetSocketAddress DATA = new InetSocketAddress("127.0.0.100", 4791);
    static final long MEMORY_BUDGET = 256L << 20;

    private final SwitchServer server;

    private DemoSwitch(SwitchServer server) {
        this.server = server;
    }

    static DemoSwitch start(Progress progress) {
        try {
            SwitchServer s = SwitchServer.start(DATA, new InetSocketAddress("127.0.0.1", 0), MEMORY_BUDGET);
            progress.note("software switch up: data " + Addresses.format(s.dataAddress()) + ", control http://"
                    + Addresses.format(s.controlAddress()) + "/");
            return new DemoSwitch(s);
        } catch (BindException e) {
            throw new CliException("cannot start the software switch on " + Addresses.format(DATA)
                    + ": address already in use (is `netreduce switch` or another demo running?)", e);
        } catch (IOException e) {
            throw new CliException("cannot start the software switch: " + e.getMessage(), e);
        }
    }

    String dataAddress() {
        return Addresses.format(server.dataAddress());
    }

    String controlUrl() {
        return "http://" + Addresses.format(server.controlAddress());
    }

    @Override
    public void close() {
        server.close();
    }
}
