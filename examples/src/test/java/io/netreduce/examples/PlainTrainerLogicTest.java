package io.netreduce.examples;

import io.netreduce.examples.plain.PlainConfig;
import io.netreduce.examples.plain.PlainSgdTrainer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PlainTrainerLogicTest {

    @Test
    @Timeout(60)
    void dataParallelMatchesSingleProcessWithInJvmSum() throws Exception {
        PlainConfig config = PlainConfig.defaults().withEpochs(3);
        TrainingResult reference = PlainSgdTrainer.train(config, new SingleProcessSync(), EpochListener.NONE);
        InJvmSync group = new InJvmSync(2);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<TrainingResult>> futures = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                GradientSync sync = group.member(r);
                futures.add(pool.submit(() -> PlainSgdTrainer.train(config, sync, EpochListener.NONE)));
            }
            TrainingResult r0 = futures.get(0).get(60, TimeUnit.SECONDS);
            TrainingResult r1 = futures.get(1).get(60, TimeUnit.SECONDS);
            assertEquals(r0.parameterDigest(), r1.parameterDigest(), "seed " + config.seed());
            assertTrue(reference.epochLoss()[2] < reference.epochLoss()[0], "loss must fall, seed " + config.seed());
            assertTrue(TrainingResult.relativeLossGap(r0, reference) < 0.005,
                    "gap " + TrainingResult.relativeLossGap(r0, reference) + " seed " + config.seed());
        } finally {
            pool.shutdownNow();
        }
    }

    /** The checks can fail: workers that do not really sum train on half the data each and drift apart. */
    @Test
    @Timeout(60)
    void workersThatDoNotSumDivergeAndMissTheReference() throws Exception {
        PlainConfig config = PlainConfig.defaults().withEpochs(2);
        TrainingResult reference = PlainSgdTrainer.train(config, new SingleProcessSync(), EpochListener.NONE);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<TrainingResult>> futures = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                GradientSync alone = new NotSumming(r);
                futures.add(pool.submit(() -> PlainSgdTrainer.train(config, alone, EpochListener.NONE)));
            }
            TrainingResult r0 = futures.get(0).get(60, TimeUnit.SECONDS);
            TrainingResult r1 = futures.get(1).get(60, TimeUnit.SECONDS);
            assertNotEquals(r0.parameterDigest(), r1.parameterDigest(), "seed " + config.seed());
            assertNotEquals(reference.parameterDigest(), r0.parameterDigest(), "seed " + config.seed());
        } finally {
            pool.shutdownNow();
        }
    }

    /** A world of two whose "sum" leaves each buffer as it is. */
    private record NotSumming(int rank) implements GradientSync {
        @Override
        public int worldSize() {
            return 2;
        }

        @Override
        public void sumInPlace(java.nio.FloatBuffer buffer) {
            // deliberately nothing
        }
    }
}
