package io.netreduce.cli.probe;

import picocli.CommandLine.Command;

/** {@code netreduce probe}: perftest-style point-to-point measurements over one queue pair. */
@Command(name = "probe", mixinStandardHelpOptions = true,
        description = {
            "Point-to-point measurements over one RC queue pair, in the style of perftest",
            "(ib_write_bw, ib_send_lat): a server process waits, a client connects and measures."
        },
        subcommands = {BwCommand.class, RttCommand.class},
        footerHeading = "%nExamples:%n",
        footer = {
            "  netreduce probe bw --local                 server and client on this machine",
            "  netreduce probe rtt --local --size 64 --iters 10000",
            "  netreduce probe bw                         server: waits on 127.0.0.1:18515",
            "  netreduce probe bw 127.0.0.1               client of that server"
        })
public final class ProbeCommand {
}
