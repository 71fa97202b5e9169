package io.netreduce.cli;

import io.netreduce.wire.control.ControlPaths;

import io.netreduce.netswitch.SwitchServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;

/** Runs the switch for {@code netreduce switch} until Ctrl-C (or SIGTERM). */
final class SwitchRunner {
    private SwitchRunner() {
    }

    static int runUntilInterrupted(SwitchCommand cmd) throws InterruptedException {
        InetSocketAddress data = address("--data", cmd.data, 4791);
        InetSocketAddress control = address("--control", cmd.control, ControlPaths.DEFAULT_PORT);
        long memory;
        try {
            memory = Sizes.parse(cmd.memory);
        } catch (IllegalArgumentException e) {
            throw new CliException("--memory: " + e.getMessage(), ExitCode.USAGE, e);
        }
        // Rings coming and going are the switch's story: show its INFO log lines.
        CliLogging.showInfo("io.netreduce.netswitch");
        SwitchServer server;
        try {
            server = SwitchServer.start(data, control, memory);
        } catch (BindException e) {
            throw new CliException("cannot bind " + Addresses.format(data) + " (data) or " + Addresses.format(control)
                    + " (control): address already in use", e);
        } catch (IOException | IllegalArgumentException e) {
            throw new CliException("cannot start the switch: " + e.getMessage(), e);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "switch-shutdown"));
        PrintWriter out = cmd.spec.commandLine().getOut();
        out.println("netreduce switch: data " + Addresses.format(server.dataAddress()) + " (RoCEv2 over UDP), control http://"
                + Addresses.format(server.controlAddress()) + "/ , aggregator memory " + Sizes.human(memory)
                + "; Ctrl-C stops it");
        out.flush();
        stopped.await();
        return ExitCode.OK;
    }

    private static InetSocketAddress address(String option, String text, int defaultPort) {
        try {
            return Addresses.parse(text, defaultPort);
        } catch (IllegalArgumentException e) {
            throw new CliException(option + ": " + e.getMessage(), ExitCode.USAGE, e);
        }
    }
}
