package io.netreduce.examples;

import io.netreduce.examples.dl4j.Dl4jConfig;
import io.netreduce.examples.dl4j.Dl4jDataParallelTrainer;
import io.netreduce.examples.dl4j.Dl4jDataParallelTrainer.Route;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class Dl4jTrainerLogicTest {

    @Test
    @Timeout(120)
    void bothRoutesMatchSingleProcessWithInJvmSum() throws Exception {
        for (Dl4jConfig config : List.of(Dl4jConfig.defaults().withEpochs(10),
                Dl4jConfig.defaults().withEpochs(10).withUpdater("sgd", 0.1))) {
            for (Route route : Route.values()) {
                if (route == Route.ACCUMULATOR && !config.updater().equals("sgd")) {
                    continue;
                }
                TrainingResult reference = Dl4jDataParallelTrainer.train(config, Route.EXPLICIT,
                        new SingleProcessSync(), EpochListener.NONE);
                InJvmSync group = new InJvmSync(2);
                ExecutorService pool = Executors.newFixedThreadPool(2);
                try {
                    List<Future<TrainingResult>> futures = new ArrayList<>();
                    for (int r = 0; r < 2; r++) {
                        GradientSync sync = group.member(r);
                        futures.add(pool.submit(() -> Dl4jDataParallelTrainer.train(config, route, sync,
                                EpochListener.NONE)));
                    }
                    TrainingResult r0 = futures.get(0).get(120, TimeUnit.SECONDS);
                    TrainingResult r1 = futures.get(1).get(120, TimeUnit.SECONDS);
                    System.out.printf("%s %s%n reference %s%n rank0     %s%n gap %.3g%n", config.updater(), route,
                            Arrays.toString(reference.epochLoss()), Arrays.toString(r0.epochLoss()),
                            TrainingResult.relativeLossGap(r0, reference));
                    assertEquals(r0.parameterDigest(), r1.parameterDigest(), route + " seed " + config.seed());
                    assertTrue(TrainingResult.relativeLossGap(r0, reference) < 0.005, route + " seed " + config.seed());
                } finally {
                    pool.shutdownNow();
                }
            }
        }
    }
}
