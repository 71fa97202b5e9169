package io.netreduce.examples;

import io.netreduce.examples.launch.DemoReport;
import io.netreduce.examples.launch.LocalDemo;
import io.netreduce.examples.launch.WorkerSummary;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each trainer with P = 2 workers (threads with in-process communicators) through the
 * real collectives: "ring" over the soft RoCEv2 provider, and "netreduce" through the
 * real software switch. Asserts that the backend asked for is the one used (no silent
 * fallback), that training converges, that the final loss is within 0.5 % of the same
 * model trained in one process on the whole data, and that both replicas end with
 * bitwise-identical parameters.
 */
class DataParallelTrainingTest {

    static final String TRANSPORT = System.getProperty("netreduce.examples.transport", "soft");
    static final long SEED = Long.getLong("netreduce.examples.seed", 42L);

    @ParameterizedTest(name = "{0} via {1}")
    @CsvSource({
            "plain, ring, 3",
            "plain, netreduce, 3",
            "dl4j, ring, 8",
            "dl4j, netreduce, 8",
            "dl4j-accumulator, netreduce, 8",
    })
    @Timeout(180)
    void twoWorkersMatchSingleProcess(String trainer, String backend, int epochs) {
        LocalDemo.Plan plan = new LocalDemo.Plan(trainer, 2, backend, TRANSPORT, epochs, SEED, Duration.ofSeconds(150));
        DemoReport report = LocalDemo.runThreads(plan, System.out::println);
        String context = trainer + " via " + backend + " over " + TRANSPORT + ", seed " + SEED + "\n"
                + report.describe();
        System.out.println(context);
        for (WorkerSummary w : report.workers()) {
            assertEquals(backend, w.algorithm(), "backend actually used by rank " + w.rank() + ": " + context);
        }
        assertTrue(report.converged(), "loss must fall over the run: " + context);
        assertTrue(report.replicasIdentical(), "replicas must be bitwise identical: " + context);
        assertTrue(report.relativeLossGap() < DemoReport.TOLERANCE, "final loss gap: " + context);
    }
}
