package io.netreduce.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "worker", hidden = true, description = "Internal: one rank of demo or bench.")
public final class WorkerCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new CliException("worker: not built yet");
    }
}
