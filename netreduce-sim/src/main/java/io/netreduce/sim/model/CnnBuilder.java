package io.netreduce.sim.model;

/**
 * Walks a convolutional network layer by layer, tracking the activation shape, and counts
 * trainable parameters and multiply-accumulates (MACs) of the forward pass. Batch-norm layers
 * contribute their scale and shift (running statistics are buffers, not gradients).
 */
public final class CnnBuilder {

    private final String name;
    private int channels;
    private int height;
    private int width;
    private long parameters;
    private double macs;

    public CnnBuilder(String name, int channels, int height, int width) {
        this.name = name;
        this.channels = channels;
        this.height = height;
        this.width = width;
    }

    public CnnBuilder conv(int outChannels, int kernel, int stride, int padding, boolean bias) {
        int outH = (height + 2 * padding - kernel) / stride + 1;
        int outW = (width + 2 * padding - kernel) / stride + 1;
        if (outH < 1 || outW < 1) {
            throw new IllegalArgumentException(name + ": convolution " + kernel + "x" + kernel + "/" + stride
                    + " does not fit a " + height + "x" + width + " input");
        }
        long weights = (long) outChannels * channels * kernel * kernel;
        parameters += weights + (bias ? outChannels : 0);
        macs += (double) weights * outH * outW;
        channels = outChannels;
        height = outH;
        width = outW;
        return this;
    }

    public CnnBuilder batchNorm() {
        parameters += 2L * channels;
        return this;
    }

    public CnnBuilder maxPool(int kernel, int stride, int padding) {
        height = (height + 2 * padding - kernel) / stride + 1;
        width = (width + 2 * padding - kernel) / stride + 1;
        return this;
    }

    /** Adaptive average pooling to a fixed output size (as torchvision's classifiers use). */
    public CnnBuilder adaptivePool(int outH, int outW) {
        height = outH;
        width = outW;
        return this;
    }

    public CnnBuilder fullyConnected(int outFeatures) {
        long in = (long) channels * height * width;
        parameters += in * outFeatures + outFeatures;
        macs += (double) in * outFeatures;
        channels = outFeatures;
        height = 1;
        width = 1;
        return this;
    }

    /** Adds a side branch's parameters and MACs computed on its own (a ResNet projection shortcut). */
    CnnBuilder addBranch(long branchParameters, double branchMacs) {
        parameters += branchParameters;
        macs += branchMacs;
        return this;
    }

    int channels() {
        return channels;
    }

    int height() {
        return height;
    }

    int width() {
        return width;
    }

    long parameters() {
        return parameters;
    }

    double macs() {
        return macs;
    }

    public Architecture build() {
        return new Architecture(name, parameters, 2 * macs, 1);
    }
}
