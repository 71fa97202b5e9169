package io.netreduce.examples;

import io.netreduce.examples.launch.DemoReport;
import io.netreduce.examples.launch.WorkerSummary;
import org.junit.jupiter.api.Test;

import java.nio.FloatBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BuildingBlocksTest {

    @Test
    void bucketPacksTensorsInOrderAndUnpacksScaled() {
        float[] a = {1f, 2f, 3f};
        float[] b = {4f, 5f};
        GradientBucket bucket = new GradientBucket(List.of(a, b));
        FloatBuffer flat = bucket.pack();
        assertTrue(flat.isDirect());
        assertEquals(5, flat.remaining());
        float[] seen = new float[5];
        flat.duplicate().get(seen);
        assertArrayEquals(new float[] {1f, 2f, 3f, 4f, 5f}, seen);
        for (int i = 0; i < 5; i++) {
            flat.put(i, flat.get(i) * 4f); // what a sum over 4 identical workers would leave
        }
        bucket.unpack(0.25f);
        assertArrayEquals(new float[] {1f, 2f, 3f}, a);
        assertArrayEquals(new float[] {4f, 5f}, b);
        assertThrows(IllegalArgumentException.class, () -> new GradientBucket(List.of()));
    }

    @Test
    void samplerSplitsEveryGlobalBatchExactlyAcrossWorkers() {
        long seed = 7;
        DistributedSampler sampler = new DistributedSampler(100, 20, seed);
        assertEquals(5, sampler.stepsPerEpoch());
        int[] whole = new int[20];
        int[] r0 = new int[10];
        int[] r1 = new int[10];
        for (int epoch = 0; epoch < 3; epoch++) {
            Set<Integer> epochSeen = new HashSet<>();
            for (int step = 0; step < 5; step++) {
                sampler.localIndices(epoch, step, 0, 1, whole);
                sampler.localIndices(epoch, step, 0, 2, r0);
                sampler.localIndices(epoch, step, 1, 2, r1);
                Set<Integer> global = new HashSet<>();
                for (int i : whole) {
                    global.add(i);
                    epochSeen.add(i);
                }
                Set<Integer> union = new HashSet<>();
                for (int i = 0; i < 10; i++) {
                    union.add(r0[i]);
                    union.add(r1[i]);
                }
                assertEquals(global, union, "seed " + seed + " epoch " + epoch + " step " + step);
            }
            assertEquals(100, epochSeen.size(), "every sample once per epoch, seed " + seed);
        }
        int[] e0 = new int[20];
        int[] e1 = new int[20];
        sampler.localIndices(0, 0, 0, 1, e0);
        sampler.localIndices(1, 0, 0, 1, e1);
        assertNotEquals(List.of(e0), List.of(e1), "epochs reshuffle, seed " + seed);
        assertThrows(IllegalArgumentException.class, () -> sampler.localBatch(3));
    }

    @Test
    void resultLineRoundTripsAndRejectsGarbage() {
        WorkerSummary s = new WorkerSummary(1, 2, "netreduce", 0.4149486720561981, "ab12");
        assertEquals(s, WorkerSummary.parse(s.format()));
        assertThrows(IllegalArgumentException.class, () -> WorkerSummary.parse("RESULT rank=1 world=2"));
        assertThrows(IllegalArgumentException.class, () -> WorkerSummary.parse("hello"));
        assertThrows(IllegalArgumentException.class,
                () -> WorkerSummary.parse("RESULT rank=x world=2 algorithm=ring finalLoss=1 digest=a"));
    }

    @Test
    void reportFailsOnFallbackDivergentReplicasOrLargeGap() {
        TrainingResult reference = new TrainingResult(0, 1, new double[] {1.0, 0.5}, new float[] {1f});
        WorkerSummary a = new WorkerSummary(0, 2, "netreduce", 0.501, "d1");
        WorkerSummary b = new WorkerSummary(1, 2, "netreduce", 0.501, "d1");
        assertTrue(new DemoReport(reference, List.of(a, b), "netreduce").passed());
        assertFalse(new DemoReport(reference, List.of(a, b), "ring").passed(), "backend not honoured");
        WorkerSummary drifted = new WorkerSummary(1, 2, "netreduce", 0.501, "d2");
        assertFalse(new DemoReport(reference, List.of(a, drifted), "netreduce").passed(), "replicas differ");
        WorkerSummary far = new WorkerSummary(1, 2, "netreduce", 0.51, "d1");
        WorkerSummary farToo = new WorkerSummary(0, 2, "netreduce", 0.51, "d1");
        assertFalse(new DemoReport(reference, List.of(farToo, far), "netreduce").passed(), "2 % gap");
    }
}
