package io.netreduce.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SimulateCommandTest {

    private record Run(int exit, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new SimulateCommand());
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void studyPrintsTheComparisonAndWritesCsvAndPlots(@TempDir Path dir) throws Exception {
        Run r = run("--out", dir.toString(), "--max-gpus", "256");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("Parallel NetReduce faster than Flat Ring"), r.out());
        assertTrue(r.out().contains("up to 68.8 %"), r.out());
        assertTrue(r.out().contains("GPT-2 medium"), r.out());
        for (String name : List.of("allreduce_vs_gpus", "allreduce_vs_intra_bandwidth", "allreduce_vs_hop_latency", "netreduce_window")) {
            Path png = dir.resolve(name + ".png");
            assertTrue(Files.size(png) > 10_000, name + ".png too small to be a chart");
            byte[] head = Files.readAllBytes(png);
            assertEquals((byte) 0x89, head[0], name + " is not a PNG");
            assertEquals('P', head[1]);
            assertTrue(Files.exists(dir.resolve(name + ".csv")), name + ".csv missing");
        }
        List<String> gpuRows = Files.readAllLines(dir.resolve("allreduce_vs_gpus.csv"));
        // Header + 4 GPU counts (32..256) × (4 algorithms + the aggregator-limited variant).
        assertEquals(1 + 4 * 5, gpuRows.size(), String.join("\n", gpuRows));
        assertTrue(gpuRows.get(0).startsWith("gpus,machines,algorithm,allreduce_ms"), gpuRows.get(0));
        List<String> comparison = Files.readAllLines(dir.resolve("paper_comparison.csv"));
        assertEquals(7, comparison.size(), String.join("\n", comparison));
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void oneClusterModeReportsEveryAlgorithmForTheModel() {
        Run r = run("--gpus", "64", "--model", "resnet50", "--bytes", "1e6");
        assertEquals(0, r.exit(), r.err());
        assertTrue(r.out().contains("64 GPUs = 8 machines x 8"), r.out());
        for (String alg : List.of("Flat Ring", "Hierarchical", "NetReduce", "Parallel NetReduce")) {
            assertTrue(r.out().contains(alg), alg + " missing:\n" + r.out());
        }
        assertTrue(r.out().contains("ResNet50") && !r.out().contains("AlexNet"), r.out());
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void studyWorksForOtherMachineShapes(@TempDir Path dir) throws Exception {
        Run r = run("--out", dir.toString(), "--gpus-per-machine", "6", "--intra-gbytes", "15.75", "--max-gpus", "100", "--no-plots");
        assertEquals(0, r.exit(), r.err());
        List<String> rows = Files.readAllLines(dir.resolve("allreduce_vs_gpus.csv"));
        // 4, 8 and 16 machines of 6 GPUs: 24, 48, 96 GPUs.
        assertTrue(rows.get(1).startsWith("24,4,") && rows.get(rows.size() - 1).startsWith("96,16,"), String.join("\n", rows));
        assertTrue(r.out().contains("NetReduce all-reduce time flat from 24 to 768 GPUs"), r.out());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void badInputGetsAClearMessageAndNonZeroExit() {
        Run r = run("--gpus", "60");
        assertNotEquals(0, r.exit());
        assertTrue(r.err().contains("not a multiple of 8"), r.err());
        r = run("--window", "0", "--gpus", "32");
        assertNotEquals(0, r.exit());
        assertTrue(r.err().contains("windowMessages"), r.err());
        r = run("--gpus", "32", "--model", "LeNet");
        assertNotEquals(0, r.exit());
        assertTrue(r.err().contains("unknown model 'LeNet'"), r.err());
        r = run("--gpus", "32", "--bytes", "-5");
        assertNotEquals(0, r.exit());
        assertTrue(r.err().contains("-5"), r.err());
        r = run("--max-gpus", "16", "--no-plots");
        assertNotEquals(0, r.exit());
        assertTrue(r.err().contains("no GPU count"), r.err());
        r = run("--machines-per-leaf", "3", "--gpus", "64");
        assertNotEquals(0, r.exit());
        assertTrue(r.err().contains("multiple of machinesPerLeaf"), r.err());
    }
}
