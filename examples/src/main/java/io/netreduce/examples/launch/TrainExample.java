package io.netreduce.examples.launch;

import io.netreduce.collectives.Collectives;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.examples.CommunicatorGradientSync;
import io.netreduce.examples.Trainer;
import io.netreduce.examples.TrainingResult;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * The examples' command line. Without {@code --worker} it runs the whole local demo:
 * the single-process reference, the software switch, P workers, and the comparison.
 * With {@code --worker} it is one rank that joins through the environment
 * (NETREDUCE_* or torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT), which is how the
 * demo starts its processes and how any other launcher can.
 */
@Command(name = "train-example", mixinStandardHelpOptions = true,
        description = "Data-parallel training on netreduce all-reduce: plain Java or Deeplearning4j.")
public final class TrainExample implements Callable<Integer> {

    @Option(names = "--trainer", defaultValue = "plain",
            description = "plain | dl4j | dl4j-accumulator (default ${DEFAULT-VALUE})")
    String trainer;

    @Option(names = "--workers", defaultValue = "2", description = "number of workers P (default ${DEFAULT-VALUE})")
    int workers;

    @Option(names = "--backend", defaultValue = "netreduce",
            description = "all-reduce backend by name: netreduce | ring (default ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--transport", defaultValue = "soft",
            description = "verbs provider: soft (RoCEv2 over UDP) | tcp (default ${DEFAULT-VALUE})")
    String transport;

    @Option(names = "--launch", defaultValue = "processes",
            description = "processes | threads (default ${DEFAULT-VALUE})")
    String launch;

    @Option(names = "--epochs", defaultValue = "0", description = "epochs (default: the trainer's own)")
    int epochs;

    @Option(names = "--seed", defaultValue = "42", description = "seed of data, initialisation and shuffling")
    long seed;

    @Option(names = "--timeout-seconds", defaultValue = "300", description = "give up after this long")
    long timeoutSeconds;

    @Option(names = "--worker", description = "run as one rank, joining through environment variables")
    boolean worker;

    @Override
    public Integer call() {
        if (!Trainer.NAMES.contains(trainer)) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--trainer must be one of " + Trainer.NAMES + ", got '" + trainer + "'");
        }
        if (worker) {
            return runWorker();
        }
        LocalDemo.Plan plan = new LocalDemo.Plan(trainer, workers, backend, transport, epochs, seed,
                Duration.ofSeconds(timeoutSeconds));
        System.out.printf("%s trainer, %d workers as %s, backend %s over %s%n", trainer, workers, launch, backend,
                transport);
        DemoReport report = switch (launch) {
            case "processes" -> LocalDemo.runProcesses(plan, System.out::println);
            case "threads" -> LocalDemo.runThreads(plan, System.out::println);
            default -> throw new CommandLine.ParameterException(new CommandLine(this),
                    "--launch must be processes or threads, got '" + launch + "'");
        };
        System.out.println(report.describe());
        return report.passed() ? 0 : 1;
    }

    private int runWorker() {
        Trainer model = Trainer.named(trainer, epochs, seed); // load data and framework before joining
        CommunicatorConfig config = CommunicatorConfig.fromEnvironment();
        try (Communicator comm = Collectives.open(config)) {
            TrainingResult result = model.train(new CommunicatorGradientSync(comm),
                    LocalDemo.epochLog(comm.rank(), System.out::println));
            System.out.println(WorkerSummary.of(result, comm.algorithm()).format());
        }
        return 0;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new TrainExample()).execute(args));
    }
}
