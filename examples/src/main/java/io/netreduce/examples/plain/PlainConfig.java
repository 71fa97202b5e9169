package io.netreduce.examples.plain;

/**
 * Hyper-parameters of the plain Java example. The defaults train in a few seconds
 * and still leave enough room above the loss floor for a bad sum to show.
 */
public record PlainConfig(long seed, int samples, int features, int hidden, int classes,
                          int globalBatch, float learningRate, int epochs) {

    public static PlainConfig defaults() {
        return new PlainConfig(42L, 4096, 16, 64, 4, 64, 0.1f, 5);
    }

    public PlainConfig withEpochs(int e) {
        return new PlainConfig(seed, samples, features, hidden, classes, globalBatch, learningRate, e);
    }

    public PlainConfig withSeed(long s) {
        return new PlainConfig(s, samples, features, hidden, classes, globalBatch, learningRate, epochs);
    }
}
