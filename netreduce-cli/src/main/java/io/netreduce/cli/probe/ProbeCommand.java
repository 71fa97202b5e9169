package io.netreduce.cli.probe;

import picocli.CommandLine.Command;

@Command(name = "probe", mixinStandardHelpOptions = true, description = "TODO")
public final class ProbeCommand {
}
