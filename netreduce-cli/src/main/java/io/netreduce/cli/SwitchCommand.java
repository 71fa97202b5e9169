package io.netreduce.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "switch", mixinStandardHelpOptions = true, description = "TODO")
public final class SwitchCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new CliException("switch: not built yet");
    }
}
