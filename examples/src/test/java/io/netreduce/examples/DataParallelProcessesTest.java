package io.netreduce.examples;

import io.netreduce.examples.launch.DemoReport;
import io.netreduce.examples.launch.LocalDemo;
import io.netreduce.examples.launch.WorkerSummary;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The honest demonstration: two separate worker JVMs, started as a launcher would, each
 * joining through NETREDUCE_* environment variables and summing its gradients through
 * the software switch; the comparison uses only what the processes printed.
 */
class DataParallelProcessesTest {

    @Test
    @Timeout(240)
    void plainTrainerInTwoProcessesThroughTheSwitch() {
        assertPassesInProcesses("plain", "netreduce", 3, 200);
    }

    /** DL4J workers need ~15 s each to start ND4J: opt in with -Dnetreduce.examples.long=true. */
    @ParameterizedTest(name = "{0} via {1}")
    @CsvSource({"dl4j, netreduce", "dl4j, ring", "dl4j-accumulator, netreduce"})
    @EnabledIfSystemProperty(named = "netreduce.examples.long", matches = "true")
    @Timeout(400)
    void dl4jTrainerInTwoProcesses(String trainer, String backend) {
        assertPassesInProcesses(trainer, backend, 8, 360);
    }

    private static void assertPassesInProcesses(String trainer, String backend, int epochs, int seconds) {
        LocalDemo.Plan plan = new LocalDemo.Plan(trainer, 2, backend, DataParallelTrainingTest.TRANSPORT, epochs,
                DataParallelTrainingTest.SEED, Duration.ofSeconds(seconds));
        DemoReport report = LocalDemo.runProcesses(plan, System.out::println);
        String context = trainer + " in 2 processes via " + backend + ", seed " + plan.seed() + "\n"
                + report.describe();
        System.out.println(context);
        assertEquals(2, report.workers().size(), context);
        for (WorkerSummary w : report.workers()) {
            assertEquals(backend, w.algorithm(), "backend actually used by rank " + w.rank() + ": " + context);
        }
        assertTrue(report.converged(), context);
        assertTrue(report.replicasIdentical(), context);
        assertTrue(report.relativeLossGap() < DemoReport.TOLERANCE, context);
    }
}
