package io.netreduce.sim.model;

/**
 * One model trained data-parallel: its architecture, the per-GPU batch, and the GPU's sustained
 * training throughput, which together give the per-iteration compute time.
 *
 * @param architecture      the model
 * @param batchPerGpu       samples (images or sequences) per GPU per iteration
 * @param sustainedFlops    FLOP/s the GPU sustains on this model's training step
 * @param bytesPerParameter gradient bytes per parameter (4: FP32 gradients, also under AMP)
 */
public record Workload(Architecture architecture, int batchPerGpu, double sustainedFlops, int bytesPerParameter) {

    public Workload {
        if (batchPerGpu < 1) {
            throw new IllegalArgumentException(architecture.name() + ": batch per GPU must be >= 1, got " + batchPerGpu);
        }
        if (!(sustainedFlops > 0)) {
            throw new IllegalArgumentException(architecture.name() + ": sustained FLOP/s must be > 0, got " + sustainedFlops);
        }
        if (bytesPerParameter < 1) {
            throw new IllegalArgumentException(architecture.name() + ": bytes per parameter must be >= 1, got " + bytesPerParameter);
        }
    }

    public double gradientBytes() {
        return architecture.gradientBytes(bytesPerParameter);
    }

    /** Forward plus backward time of one iteration on one GPU. */
    public double computeSeconds() {
        return architecture.trainingFlopsPerSample() * batchPerGpu / sustainedFlops;
    }

    /** The backward pass: the part of compute during which gradients can already be all-reduced. */
    public double backwardSeconds() {
        return computeSeconds() * 2 / 3;
    }

    /** Iteration time when all-reduce starts after the backward pass: compute + communication. */
    public double iterationSeconds(double allReduceSeconds) {
        return computeSeconds() + allReduceSeconds;
    }

    /**
     * Iteration time with ideal overlap: all-reduce runs bucket by bucket during the backward pass,
     * so only what exceeds the backward pass shows: forward + max(backward, all-reduce). An upper
     * bound on what overlap can give (real frameworks still wait for the last bucket).
     */
    public double overlappedIterationSeconds(double allReduceSeconds) {
        return computeSeconds() - backwardSeconds() + Math.max(backwardSeconds(), allReduceSeconds);
    }
}
