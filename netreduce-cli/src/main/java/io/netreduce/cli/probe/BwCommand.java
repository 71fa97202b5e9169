package io.netreduce.cli.probe;

import picocli.CommandLine.Command;

/** {@code netreduce probe bw}: like ib_write_bw. */
@Command(name = "bw", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "RDMA WRITE bandwidth, like perftest's ib_write_bw: the client keeps --tx-depth writes",
            "of --size bytes in flight until --iters have completed. Columns:",
            "  #bytes #iterations BW peak[MiB/sec] BW average[MiB/sec] MsgRate[Mpps]",
            "BW average counts from the first post to the last completion; BW peak is the best",
            "rate over any --tx-depth consecutive completions. MiB = 2^20 bytes, as perftest's MB.",
            "Without SERVER it runs the server side; with SERVER, the client; with --local, both."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  netreduce probe bw --local --size 4K-1M --iters 2000",
            "  netreduce probe bw --listen 127.0.0.1:18515          (server)",
            "  netreduce probe bw 127.0.0.1:18515 --transport tcp    (client)"
        })
final class BwCommand extends ProbeTestCommand {
    BwCommand() {
        super(ProbeKind.BW);
    }
}
