package io.netreduce.cli;

import io.netreduce.cli.allreduce.LoopbackSubnet;
import io.netreduce.cli.allreduce.Progress;
import io.netreduce.netswitch.SwitchServer;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;

/**
 * The software switch that {@code demo} and {@code bench --local} run inside their own
 * process: data plane on port 4791 of the run's {@link LoopbackSubnet} (.100, an address of
 * its own next to the workers' .2, .3, ...), control plane on a free loopback port. When it
 * stops it notes its counters, so that a run's losses and drops can be told apart.
 */
final class DemoSwitch implements AutoCloseable {
    static final long MEMORY_BUDGET = 256L << 20;

    private final SwitchServer server;
    private final Progress progress;

    private DemoSwitch(SwitchServer server, Progress progress) {
        this.server = server;
        this.progress = progress;
    }

    static DemoSwitch start(Progress progress, LoopbackSubnet subnet) {
        InetSocketAddress data = new InetSocketAddress(subnet.switchHost(), 4791);
        try {
            SwitchServer s = SwitchServer.start(data, new InetSocketAddress("127.0.0.1", 0), MEMORY_BUDGET);
            progress.note("software switch up: data " + Addresses.format(s.dataAddress()) + ", control http://"
                    + Addresses.format(s.controlAddress()) + "/");
            return new DemoSwitch(s, progress);
        } catch (BindException e) {
            throw new CliException("cannot start the software switch on " + Addresses.format(data)
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

    /** Stops the switch and notes what its counters saw over the run (drops, NAKs absorbed, results held...). */
    @Override
    public void close() {
        server.close();
        progress.note("software switch counted: " + server.engine().counters().summary());
    }
}
