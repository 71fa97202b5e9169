package io.netreduce.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "worker", mixinStandardHelpOptions = true, description = "TODO")
public final class WorkerCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new CliException("worker: not built yet");
    }
}
