package io.netreduce.examples.plain;

import java.util.List;
import java.util.Random;

/**
 * A one-hidden-layer perceptron (tanh, then softmax) with cross-entropy loss, written
 * out by hand so the example depends on nothing but the JDK. Parameters and gradients
 * live in separate arrays per tensor, as in any framework; the trainer buckets the
 * gradients into one flat buffer for the all-reduce.
 */
public final class Mlp {

    private final int inputs;
    private final int hidden;
    private final int classes;

    private final float[] w1;
    private final float[] b1;
    private final float[] w2;
    private final float[] b2;
    private final float[] gw1;
    private final float[] gb1;
    private final float[] gw2;
    private final float[] gb2;

    // scratch for one sample, reused so a step allocates nothing
    private final float[] activation;
    private final float[] probabilities;
    private final float[] hiddenDelta;

    public Mlp(int inputs, int hidden, int classes, long seed) {
        this.inputs = inputs;
        this.hidden = hidden;
        this.classes = classes;
        w1 = new float[inputs * hidden];
        b1 = new float[hidden];
        w2 = new float[hidden * classes];
        b2 = new float[classes];
        gw1 = new float[w1.length];
        gb1 = new float[b1.length];
        gw2 = new float[w2.length];
        gb2 = new float[b2.length];
        activation = new float[hidden];
        probabilities = new float[classes];
        hiddenDelta = new float[hidden];
        Random random = new Random(seed);
        // Xavier/Glorot scale keeps tanh out of saturation at the start
        double s1 = Math.sqrt(2.0 / (inputs + hidden));
        double s2 = Math.sqrt(2.0 / (hidden + classes));
        for (int i = 0; i < w1.length; i++) {
            w1[i] = (float) (s1 * random.nextGaussian());
        }
        for (int i = 0; i < w2.length; i++) {
            w2[i] = (float) (s2 * random.nextGaussian());
        }
    }

    /** Parameter tensors in a fixed order (the same order as {@link #gradients()}). */
    public List<float[]> parameters() {
        return List.of(w1, b1, w2, b2);
    }

    /** Gradient tensors, filled by {@link #computeGradients}. */
    public List<float[]> gradients() {
        return List.of(gw1, gb1, gw2, gb2);
    }

    public int parameterCount() {
        return w1.length + b1.length + w2.length + b2.length;
    }

    /** All parameters copied into one array, in {@link #parameters()} order. */
    public float[] flatParameters() {
        float[] out = new float[parameterCount()];
        int offset = 0;
        for (float[] p : parameters()) {
            System.arraycopy(p, 0, out, offset, p.length);
            offset += p.length;
        }
        return out;
    }

    /**
     * Sets the gradients to the mean gradient of the loss over the given samples.
     *
     * @return the summed loss over those samples
     */
    public double computeGradients(ClusterDataset data, int[] sampleIndices) {
        for (float[] g : gradients()) {
            java.util.Arrays.fill(g, 0f);
        }
        double lossSum = 0;
        for (int s : sampleIndices) {
            lossSum += forward(data, s);
            int label = data.label(s);
            // d loss / d logits = softmax - onehot
            for (int c = 0; c < classes; c++) {
                float delta = probabilities[c] - (c == label ? 1f : 0f);
                gb2[c] += delta;
                for (int h = 0; h < hidden; h++) {
                    gw2[h * classes + c] += activation[h] * delta;
                }
            }
            for (int h = 0; h < hidden; h++) {
                float back = 0f;
                for (int c = 0; c < classes; c++) {
                    back += w2[h * classes + c] * (probabilities[c] - (c == label ? 1f : 0f));
                }
                hiddenDelta[h] = back * (1f - activation[h] * activation[h]);
                gb1[h] += hiddenDelta[h];
            }
            for (int i = 0; i < inputs; i++) {
                float xi = data.feature(s, i);
                int row = i * hidden;
                for (int h = 0; h < hidden; h++) {
                    gw1[row + h] += xi * hiddenDelta[h];
                }
            }
        }
        float scale = 1f / sampleIndices.length;
        for (float[] g : gradients()) {
            for (int i = 0; i < g.length; i++) {
                g[i] *= scale;
            }
        }
        return lossSum;
    }

    /** Summed cross-entropy loss over the samples {@code first, first + stride, ...} below {@code end}. */
    public double lossSum(ClusterDataset data, int first, int stride, int end) {
        double sum = 0;
        for (int s = first; s < end; s += stride) {
            sum += forward(data, s);
        }
        return sum;
    }

    /** Plain SGD: parameters -= learningRate * gradients. */
    public void sgdStep(float learningRate) {
        List<float[]> ps = parameters();
        List<float[]> gs = gradients();
        for (int t = 0; t < ps.size(); t++) {
            float[] p = ps.get(t);
            float[] g = gs.get(t);
            for (int i = 0; i < p.length; i++) {
                p[i] -= learningRate * g[i];
            }
        }
    }

    /** Forward pass of one sample into the scratch arrays; returns its loss. */
    private double forward(ClusterDataset data, int s) {
        for (int h = 0; h < hidden; h++) {
            float z = b1[h];
            for (int i = 0; i < inputs; i++) {
                z += data.feature(s, i) * w1[i * hidden + h];
            }
            activation[h] = (float) Math.tanh(z);
        }
        float max = Float.NEGATIVE_INFINITY;
        for (int c = 0; c < classes; c++) {
            float z = b2[c];
            for (int h = 0; h < hidden; h++) {
                z += activation[h] * w2[h * classes + c];
            }
            probabilities[c] = z;
            max = Math.max(max, z);
        }
        float sum = 0f;
        for (int c = 0; c < classes; c++) {
            probabilities[c] = (float) Math.exp(probabilities[c] - max);
            sum += probabilities[c];
        }
        for (int c = 0; c < classes; c++) {
            probabilities[c] /= sum;
        }
        return -Math.log(Math.max(probabilities[data.label(s)], 1e-30f));
    }
}
