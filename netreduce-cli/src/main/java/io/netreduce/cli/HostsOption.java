package io.netreduce.cli;

import io.netreduce.collectives.EnvironmentVariables;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** {@code --hosts H} and {@code --flat}: how local ranks are grouped into emulated hosts. */
final class HostsOption {
    @Option(names = "--hosts", paramLabel = "H",
            description = "Group the local ranks into H emulated hosts of consecutive ranks: within a host they "
                    + "reduce through shared memory, across hosts with the algorithm (Parallel NetReduce for "
                    + "netreduce). Default: every rank its own host.")
    Integer hosts;

    @Option(names = "--flat",
            description = "With --hosts, run the algorithm flat over every rank anyway (no shared memory).")
    boolean flat;

    /** The variables the ranks get. */
    Map<String, String> environment(int ranks) {
        Map<String, String> env = new LinkedHashMap<>();
        if (hosts != null) {
            if (hosts < 1 || ranks % hosts != 0) {
                throw new CliException("--hosts " + hosts + " must divide the " + ranks + " ranks into equal hosts",
                        ExitCode.USAGE, null);
            }
            env.put(EnvironmentVariables.HOSTS, String.valueOf(hosts));
        }
        if (flat) {
            env.put(EnvironmentVariables.HIERARCHICAL, "off");
        }
        return env;
    }

    /** ", 2 emulated hosts" or "". */
    String describe() {
        return hosts == null ? "" : ", " + hosts + " emulated host" + (hosts == 1 ? "" : "s") + (flat ? " (flat)" : "");
    }
}
