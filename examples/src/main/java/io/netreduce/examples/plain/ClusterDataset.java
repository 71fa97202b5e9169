package io.netreduce.examples.plain;

import java.util.Random;

/**
 * A classification data set generated deterministically from a seed: {@code classes}
 * Gaussian clusters in {@code features} dimensions whose centres overlap enough that
 * the problem is not trivially separable. Every worker regenerates the same data from
 * the same seed, so nothing has to be shipped or downloaded.
 */
public final class ClusterDataset {

    private final int features;
    private final int classes;
    private final float[] x;
    private final int[] y;

    private ClusterDataset(int features, int classes, float[] x, int[] y) {
        this.features = features;
        this.classes = classes;
        this.x = x;
        this.y = y;
    }

    public static ClusterDataset generate(long seed, int samples, int features, int classes) {
        if (samples <= 0 || features <= 0 || classes < 2) {
            throw new IllegalArgumentException("need samples > 0, features > 0, classes >= 2; got "
                    + samples + ", " + features + ", " + classes);
        }
        Random random = new Random(seed);
        float[] centres = new float[classes * features];
        for (int i = 0; i < centres.length; i++) {
            centres[i] = (float) (0.5 * random.nextGaussian());
        }
        float[] x = new float[samples * features];
        int[] y = new int[samples];
        for (int s = 0; s < samples; s++) {
            int label = random.nextInt(classes);
            y[s] = label;
            for (int f = 0; f < features; f++) {
                x[s * features + f] = centres[label * features + f] + (float) random.nextGaussian();
            }
        }
        return new ClusterDataset(features, classes, x, y);
    }

    public int samples() {
        return y.length;
    }

    public int features() {
        return features;
    }

    public int classes() {
        return classes;
    }

    /** Feature {@code f} of sample {@code s}. */
    public float feature(int s, int f) {
        return x[s * features + f];
    }

    public int label(int s) {
        return y[s];
    }
}
