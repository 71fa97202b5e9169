package io.netreduce.examples.dl4j;

/**
 * Hyper-parameters of the DL4J example on Iris. {@code updater} is "adam" or "sgd";
 * the explicit loop handles both exactly, the gradients-accumulator route matches the
 * single-process run only for updaters linear in the gradient (see
 * {@link AllReduceGradientsAccumulator}).
 */
public record Dl4jConfig(long seed, int hidden, int globalBatch, double learningRate, String updater, int epochs) {

    public static Dl4jConfig defaults() {
        return new Dl4jConfig(42L, 16, 30, 0.01, "adam", 20);
    }

    public Dl4jConfig withEpochs(int e) {
        return new Dl4jConfig(seed, hidden, globalBatch, learningRate, updater, e);
    }

    public Dl4jConfig withSeed(long s) {
        return new Dl4jConfig(s, hidden, globalBatch, learningRate, updater, epochs);
    }

    public Dl4jConfig withUpdater(String u, double lr) {
        return new Dl4jConfig(seed, hidden, globalBatch, lr, u, epochs);
    }
}
