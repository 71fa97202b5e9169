package io.netreduce.cli.probe;

import picocli.CommandLine.Command;

/** {@code netreduce probe rtt}: like ib_send_lat, reporting whole round trips. */
@Command(name = "rtt", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "SEND/RECV ping-pong round-trip time, like perftest's ib_send_lat. Columns:",
            "  #bytes #iterations t_min t_max t_typical t_avg t_stdev 99%% 99.9%%   (microseconds)",
            "Times are whole round trips (perftest halves them); t_typical is the median.",
            "Without SERVER it runs the server side; with SERVER, the client; with --local, both."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  netreduce probe rtt --local --size 64 --iters 10000",
            "  netreduce probe rtt --local --size 8-4K --json"
        })
final class RttCommand extends ProbeTestCommand {
    RttCommand() {
        super(ProbeKind.RTT);
    }
}
