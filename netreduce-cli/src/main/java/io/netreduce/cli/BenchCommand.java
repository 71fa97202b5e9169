package io.netreduce.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "bench", mixinStandardHelpOptions = true, description = "TODO")
public final class BenchCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new CliException("bench: not built yet");
    }
}
