package io.netreduce.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "demo", mixinStandardHelpOptions = true, description = "TODO")
public final class DemoCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new CliException("demo: not built yet");
    }
}
