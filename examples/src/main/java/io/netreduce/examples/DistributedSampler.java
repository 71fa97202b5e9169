package io.netreduce.examples;

import java.util.Random;

/**
 * Which samples a worker trains on in each step, the way PyTorch's DistributedSampler
 * does it: every epoch all workers shuffle the sample indices with the same seed, cut
 * the permutation into global batches, and worker {@code r} of {@code P} takes every
 * P-th sample of a global batch starting at {@code r}. The union of the workers'
 * local batches is exactly the batch a single process would train on, which is what
 * makes the data-parallel run comparable with the single-process one.
 */
public final class DistributedSampler {

    private final int samples;
    private final int globalBatch;
    private final long seed;
    private final int[] permutation;
    private int permutedEpoch = -1;

    public DistributedSampler(int samples, int globalBatch, long seed) {
        if (samples <= 0 || globalBatch <= 0 || globalBatch > samples) {
            throw new IllegalArgumentException("need 0 < globalBatch <= samples, got batch "
                    + globalBatch + " for " + samples + " samples");
        }
        this.samples = samples;
        this.globalBatch = globalBatch;
        this.seed = seed;
        this.permutation = new int[samples];
    }

    /** Steps per epoch; a last partial batch is dropped so every step has the same size. */
    public int stepsPerEpoch() {
        return samples / globalBatch;
    }

    public int globalBatch() {
        return globalBatch;
    }

    /** Local batch size of each worker; the global batch must split evenly. */
    public int localBatch(int worldSize) {
        if (globalBatch % worldSize != 0) {
            throw new IllegalArgumentException("global batch " + globalBatch
                    + " does not split evenly over " + worldSize + " workers");
        }
        return globalBatch / worldSize;
    }

    /** Fills {@code out} with the sample indices of {@code rank}'s part of global batch {@code step}. */
    public void localIndices(int epoch, int step, int rank, int worldSize, int[] out) {
        int local = localBatch(worldSize);
        if (out.length != local) {
            throw new IllegalArgumentException("out has " + out.length + " slots, local batch is " + local);
        }
        if (step < 0 || step >= stepsPerEpoch()) {
            throw new IllegalArgumentException("step " + step + " outside 0.." + (stepsPerEpoch() - 1));
        }
        permute(epoch);
        int base = step * globalBatch;
        for (int i = 0; i < local; i++) {
            out[i] = permutation[base + rank + i * worldSize];
        }
    }

    private void permute(int epoch) {
        if (epoch == permutedEpoch) {
            return;
        }
        for (int i = 0; i < samples; i++) {
            permutation[i] = i;
        }
        Random random = new Random(seed * 1_000_003L + epoch);
        for (int i = samples - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = permutation[i];
            permutation[i] = permutation[j];
            permutation[j] = t;
        }
        permutedEpoch = epoch;
    }
}
