package io.netreduce.sim.study;

import io.netreduce.sim.topology.ClusterSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ScalingStudyTest {

    private static StudyConfig small() {
        return new StudyConfig(ClusterSpec.paperTestbed(), 50e6, "50 MB", List.of(32, 64, 512),
                new double[]{15.75e9, 150e9}, new double[]{1e-6, 100e-6}, new int[]{1, 2}, 75e9, 25e12);
    }

    private static double cell(Table t, String algorithm, String keyColumn, String key, String valueColumn) {
        int a = t.header().indexOf("algorithm");
        int k = t.header().indexOf(keyColumn);
        int v = t.header().indexOf(valueColumn);
        for (List<String> row : t.rows()) {
            if (row.get(a).equals(algorithm) && row.get(k).equals(key)) {
                return Double.parseDouble(row.get(v));
            }
        }
        throw new AssertionError("no row " + algorithm + " " + keyColumn + "=" + key + " in " + t.rows());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void studyProducesConsistentTablesAndCharts(@TempDir Path dir) throws Exception {
        StudyResult r = ScalingStudy.run(small());

        Table gpus = r.table("allreduce_vs_gpus");
        assertEquals(3 * 5, gpus.rows().size());
        double pnr32 = cell(gpus, "parallel-netreduce", "gpus", "32", "allreduce_ms");
        double pnr64 = cell(gpus, "parallel-netreduce", "gpus", "64", "allreduce_ms");
        assertEquals(pnr32, pnr64, 1e-9, "Parallel NetReduce under one switch does not depend on P");
        assertTrue(cell(gpus, "flat-ring", "gpus", "512", "allreduce_ms") > cell(gpus, "flat-ring", "gpus", "32", "allreduce_ms"));
        assertEquals(512, r.largestGpus());

        Table latency = r.table("allreduce_vs_hop_latency");
        // At 100 µs per hop a window of 2 x 170 KiB cannot cover the round trip: NetReduce slows down.
        assertTrue(cell(latency, "netreduce", "hop_latency_us", "100.0", "allreduce_ms")
                > 2 * cell(latency, "netreduce", "hop_latency_us", "1.0", "allreduce_ms"));

        assertEquals(7, r.table("models_summary").rows().size());
        Table paper = r.table("paper_comparison");
        assertEquals(6, paper.rows().size());
        // What the model computes, not what the table quotes from the paper: the training gain
        // over Flat Ring is positive and bounded by the all-reduce's own speedup (a model tends
        // to it as it becomes network-bound), and Parallel NetReduce's time stays flat with P.
        List<String> flat = paper.rows().get(0);
        double trainingGain = leadingNumber(flat.get(2));
        double allReduceGain = leadingNumber(flat.get(3).substring(flat.get(3).indexOf("is ") + 3));
        assertTrue(trainingGain > 0 && trainingGain <= allReduceGain, flat.toString());
        List<String> scaling = paper.rows().get(paper.rows().size() - 1);
        double pnrRatio = leadingNumber(scaling.get(2).substring(1));
        double ringRatio = leadingNumber(scaling.get(2).substring(scaling.get(2).indexOf("Ring x") + 6));
        assertEquals(1.0, pnrRatio, 0.01, scaling.toString());
        assertTrue(ringRatio > 1.1, scaling.toString());
        assertTrue(paper.toMarkdown().startsWith("| claim"), paper.toMarkdown());

        List<Path> files = r.writeTo(dir, true);
        long pngs = files.stream().filter(f -> f.toString().endsWith(".png")).count();
        assertEquals(5, pngs, files.toString());
        for (Path f : files) {
            assertTrue(Files.size(f) > 100, f + " is empty");
        }
        byte[] png = Files.readAllBytes(dir.resolve("allreduce_vs_gpus.png"));
        assertEquals((byte) 0x89, png[0]);
        assertEquals('P', png[1]);
        assertEquals('N', png[2]);
        assertEquals('G', png[3]);
        List<String> csv = Files.readAllLines(dir.resolve("allreduce_vs_gpus.csv"));
        assertEquals(gpus.rows().size() + 1, csv.size());
    }

    /** The number a table cell starts with ("35.2 % (AlexNet)" gives 35.2). */
    private static double leadingNumber(String cell) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("^\\s*(-?\\d+(\\.\\d+)?)").matcher(cell);
        assertTrue(m.find(), "no number at the start of '" + cell + "'");
        return Double.parseDouble(m.group(1));
    }

    @Test
    void csvQuotesCellsThatNeedIt(@TempDir Path dir) throws Exception {
        Table t = new Table("a", "b").add("x,y", "say \"hi\"");
        t.writeCsv(dir.resolve("t.csv"));
        assertEquals(List.of("a,b", "\"x,y\",\"say \"\"hi\"\"\""), Files.readAllLines(dir.resolve("t.csv")));
        assertThrows(IllegalArgumentException.class, () -> t.add("only one"));
    }

    @Test
    void configRejectsGpuCountsThatDoNotFillMachines() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new StudyConfig(ClusterSpec.paperTestbed(),
                1e6, "x", List.of(12), new double[]{1e9}, new double[]{1e-6}, new int[]{1}, 1e9, 1e12));
        assertTrue(e.getMessage().contains("12"), e.getMessage());
    }
}
