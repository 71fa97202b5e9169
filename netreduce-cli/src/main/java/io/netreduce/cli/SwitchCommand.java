package io.netreduce.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code netreduce switch}: the software NetReduce switch as a long-running process. */
@Command(name = "switch", mixinStandardHelpOptions = true, sortOptions = false,
        description = {
            "Runs the software NetReduce switch until Ctrl-C. Workers send their RoCEv2 datagrams to",
            "the data address; rings are set up and torn down through the HTTP/JSON control plane.",
            "Rings are logged as they come and go."
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  netreduce switch",
            "  netreduce switch --data 127.0.0.100:4791 --control 127.0.0.1:7100 --memory 512M",
            "  curl -s http://127.0.0.1:7100/rings          (rings and their state)",
            "  NETREDUCE_SWITCH=127.0.0.100:4791 NETREDUCE_SWITCH_CONTROL=http://127.0.0.1:7100 \\",
            "    netreduce bench --local 4                    (workers use this switch)"
        })
public final class SwitchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--data", paramLabel = "HOST:PORT", defaultValue = "127.0.0.100:4791",
            description = "UDP address for RoCEv2 datagrams. Default ${DEFAULT-VALUE}.")
    String data;

    @Option(names = "--control", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:7100",
            description = "HTTP address of the control plane. Default ${DEFAULT-VALUE}.")
    String control;

    @Option(names = "--memory", paramLabel = "SIZE", defaultValue = "256M",
            description = "Aggregator memory budget shared by all rings (K, M, G suffixes). Default ${DEFAULT-VALUE}.")
    String memory;

    @Override
    public Integer call() throws Exception {
        return SwitchRunner.runUntilInterrupted(this);
    }
}
