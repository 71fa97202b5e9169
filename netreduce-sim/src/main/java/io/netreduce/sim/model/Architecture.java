package io.netreduce.sim.model;

/**
 * A network's size as the simulator needs it, computed from its layer definitions.
 *
 * @param name                  display name
 * @param parameters            trainable parameters (the gradient has one value per parameter)
 * @param forwardFlopsPerSample floating-point operations of one forward pass of one sample
 *                              (an image, or a sequence of {@code tokensPerSample} tokens)
 * @param tokensPerSample       sequence length for transformers, 1 for images
 */
public record Architecture(String name, long parameters, double forwardFlopsPerSample, int tokensPerSample) {

    /** Gradient size in bytes at {@code bytesPerParameter} (4 for FP32 gradients). */
    public double gradientBytes(int bytesPerParameter) {
        return (double) parameters * bytesPerParameter;
    }

    /**
     * Training FLOPs per sample: forward plus backward, the backward pass costing about twice the
     * forward (gradients with respect to activations and to weights), the usual 3× rule
     * (Kaplan et al., "Scaling Laws for Neural Language Models", 2020, section 2.1).
     */
    public double trainingFlopsPerSample() {
        return 3 * forwardFlopsPerSample;
    }
}
