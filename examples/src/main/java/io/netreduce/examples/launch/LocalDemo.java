package io.netreduce.examples.launch;

import io.netreduce.collectives.EnvironmentVariables;

import io.netreduce.collectives.Collectives;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.examples.CommunicatorGradientSync;
import io.netreduce.examples.EpochListener;
import io.netreduce.examples.Trainer;
import io.netreduce.examples.TrainingResult;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The local demo setup: the single-process reference, then the software switch (for the
 * "netreduce" backend) and P workers on this machine, either as separate JVMs or as
 * threads with in-process communicators, and the comparison of the two.
 */
public final class LocalDemo {

    /** What to run. */
    public record Plan(String trainer, int workers, String backend, String transport, int epochs, long seed,
                       Duration timeout) {
    }

    private LocalDemo() {
    }

    /** P worker processes, each started with {@code TrainExample --worker}. */
    public static DemoReport runProcesses(Plan plan, Consumer<String> out) {
        TrainingResult reference = reference(plan, out);
        try (LocalSwitch sw = switchFor(plan)) {
            Map<String, String> env = new LinkedHashMap<>();
            env.put(EnvironmentVariables.ALGORITHM, plan.backend());
            env.put(EnvironmentVariables.TRANSPORT, plan.transport());
            env.put(EnvironmentVariables.DEVICE_PORT, Integer.toString(WorkerProcesses.freeDevicePort(plan.workers())));
            env.put(EnvironmentVariables.TIMEOUT_SECONDS, "30");
            // ND4J's OpenMP threads spin while waiting: P workers on few cores must not starve each other
            env.put("OMP_NUM_THREADS", System.getenv().getOrDefault("OMP_NUM_THREADS",
                    Integer.toString(Math.max(1, Runtime.getRuntime().availableProcessors() / plan.workers()))));
            if (sw != null) {
                env.putAll(sw.environment());
            }
            List<String> args = List.of("--worker", "--trainer", plan.trainer(), "--epochs",
                    Integer.toString(plan.epochs()), "--seed", Long.toString(plan.seed()));
            List<WorkerSummary> workers = new ArrayList<>();
            for (WorkerProcesses.Outcome o : WorkerProcesses.run(plan.workers(), TrainExample.class.getName(), args,
                    env, plan.timeout(), out)) {
                if (o.exitCode() != 0 || o.resultLine() == null) {
                    throw new IllegalStateException("worker " + o.rank() + " failed: exit code " + o.exitCode()
                            + (o.resultLine() == null ? ", no RESULT line" : ""));
                }
                workers.add(WorkerSummary.parse(o.resultLine()));
            }
            return new DemoReport(reference, workers, plan.backend());
        }
    }

    /** P threads of this JVM, each with its own communicator from {@link Collectives#openLocal}. */
    public static DemoReport runThreads(Plan plan, Consumer<String> out) {
        TrainingResult reference = reference(plan, out);
        try (LocalSwitch sw = switchFor(plan)) {
            CommunicatorConfig.Builder template = CommunicatorConfig.builder().algorithm(plan.backend())
                    .transport(plan.transport()).devicePort(WorkerProcesses.freeDevicePort(plan.workers()))
                    .timeout(Duration.ofSeconds(30));
            if (sw != null) {
                sw.configure(template);
            }
            List<Trainer> trainers = new ArrayList<>();
            for (int r = 0; r < plan.workers(); r++) {
                trainers.add(Trainer.named(plan.trainer(), plan.epochs(), plan.seed()));
            }
            List<Communicator> comms = Collectives.openLocal(plan.workers(), template.build());
            ExecutorService pool = Executors.newFixedThreadPool(plan.workers());
            boolean[] closed = new boolean[comms.size()];
            try {
                List<Future<WorkerSummary>> running = new ArrayList<>();
                for (Communicator c : comms) {
                    Trainer trainer = trainers.get(c.rank());
                    EpochListener log = epochLog(c.rank(), out);
                    running.add(pool.submit(() -> {
                        // each worker leaves the group itself when done, as a process would
                        try {
                            return WorkerSummary.of(trainer.train(new CommunicatorGradientSync(c), log),
                                    c.algorithm());
                        } finally {
                            closed[c.rank()] = true;
                            c.close();
                        }
                    }));
                }
                long deadline = System.nanoTime() + plan.timeout().toNanos();
                List<WorkerSummary> workers = new ArrayList<>();
                for (Future<WorkerSummary> f : running) {
                    workers.add(f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
                }
                return new DemoReport(reference, workers, plan.backend());
            } catch (ExecutionException e) {
                throw new IllegalStateException("a worker failed: " + e.getCause(), e.getCause());
            } catch (TimeoutException e) {
                throw new IllegalStateException("workers still running after " + plan.timeout(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            } finally {
                pool.shutdownNow();
                for (Communicator c : comms) {
                    if (!closed[c.rank()]) {
                        c.close();
                    }
                }
            }
        }
    }

    static EpochListener epochLog(int rank, Consumer<String> out) {
        long start = System.nanoTime();
        return (epoch, loss) -> out.accept(String.format("rank %d epoch %d loss %.6f (%.1f s)", rank, epoch, loss,
                (System.nanoTime() - start) / 1e9));
    }

    private static TrainingResult reference(Plan plan, Consumer<String> out) {
        out.accept("training the single-process reference (" + plan.trainer() + ", seed " + plan.seed() + ")");
        return Trainer.reference(plan.trainer(), plan.epochs(), plan.seed(),
                (epoch, loss) -> out.accept(String.format("reference epoch %d loss %.6f", epoch, loss)));
    }

    private static LocalSwitch switchFor(Plan plan) {
        return CommunicatorConfig.NETREDUCE.equals(plan.backend()) ? LocalSwitch.start() : null;
    }
}
