package io.netreduce.examples;

import io.netreduce.examples.dl4j.Dl4jConfig;
import io.netreduce.examples.dl4j.Dl4jDataParallelTrainer;
import io.netreduce.examples.dl4j.Dl4jDataParallelTrainer.Route;
import io.netreduce.examples.plain.PlainConfig;
import io.netreduce.examples.plain.PlainSgdTrainer;

import java.util.List;

/**
 * One of the example trainers with its data loaded and its model built, ready to train
 * once on any {@link GradientSync}. Build it before opening the communicator: starting a
 * framework can take seconds, and peers waiting on a rank that is not yet in its
 * training loop may give up.
 */
@FunctionalInterface
public interface Trainer {

    /** Trains for the configured epochs and returns this worker's losses and parameters. */
    TrainingResult train(GradientSync sync, EpochListener listener);

    /**
     * The trainer named on a command line: "plain" (hand-written MLP, SGD),
     * "dl4j" (DL4J on Iris, gradients all-reduced before the updater, Adam) or
     * "dl4j-accumulator" (DL4J {@code net.fit} with the all-reduce gradients accumulator, SGD).
     * {@code epochs <= 0} keeps the trainer's default.
     */
    static Trainer named(String name, int epochs, long seed) {
        return switch (name) {
            case "plain" -> {
                PlainConfig c = PlainConfig.defaults().withSeed(seed);
                PlainConfig config = epochs > 0 ? c.withEpochs(epochs) : c;
                yield new PlainSgdTrainer(config);
            }
            case "dl4j" -> {
                Dl4jConfig c = Dl4jConfig.defaults().withSeed(seed);
                Dl4jConfig config = epochs > 0 ? c.withEpochs(epochs) : c;
                yield new Dl4jDataParallelTrainer(config, Route.EXPLICIT);
            }
            case "dl4j-accumulator" -> {
                Dl4jConfig c = Dl4jConfig.defaults().withSeed(seed).withUpdater("sgd", 0.1);
                Dl4jConfig config = epochs > 0 ? c.withEpochs(epochs) : c;
                yield new Dl4jDataParallelTrainer(config, Route.ACCUMULATOR);
            }
            default -> throw new IllegalArgumentException("unknown trainer '" + name + "'; known: " + NAMES);
        };
    }

    List<String> NAMES = List.of("plain", "dl4j", "dl4j-accumulator");

    /**
     * The same model trained in one process on the whole data with the same seed: the
     * reference every data-parallel run is compared with. The accumulator route's
     * reference is the explicit loop in one process, which is exactly DL4J's own
     * {@code fit} without an accumulator.
     */
    static TrainingResult reference(String name, int epochs, long seed, EpochListener listener) {
        return named(name, epochs, seed).train(new SingleProcessSync(), listener);
    }
}
