package io.netreduce.examples.plain;

import io.netreduce.examples.DistributedSampler;
import io.netreduce.examples.EpochListener;
import io.netreduce.examples.GradientBucket;
import io.netreduce.examples.GradientSync;
import io.netreduce.examples.Trainer;
import io.netreduce.examples.TrainingResult;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;

/**
 * Data-parallel SGD on the hand-written {@link Mlp}. Each step every worker computes
 * the mean gradient over its part of the global batch, the gradients are bucketed into
 * one flat buffer, summed across workers with a single all-reduce, divided by the
 * number of workers, and applied. Since every worker applies the same bits to the
 * same parameters, the replicas stay bitwise identical; with one worker
 * ({@link io.netreduce.examples.SingleProcessSync}) this is ordinary SGD on the whole
 * batch, the reference the distributed run is compared with.
 */
public final class PlainSgdTrainer implements Trainer {

    private final PlainConfig config;
    private final ClusterDataset data;
    private final Mlp model;

    /** Builds the data and the model; train once with {@link #train(GradientSync, EpochListener)}. */
    public PlainSgdTrainer(PlainConfig config) {
        this.config = config;
        this.data = ClusterDataset.generate(config.seed(), config.samples(), config.features(), config.classes());
        this.model = new Mlp(config.features(), config.hidden(), config.classes(), config.seed() + 1);
    }

    public static TrainingResult train(PlainConfig config, GradientSync sync, EpochListener listener) {
        return new PlainSgdTrainer(config).train(sync, listener);
    }

    @Override
    public TrainingResult train(GradientSync sync, EpochListener listener) {
        int rank = sync.rank();
        int world = sync.worldSize();

        // Start from rank 0's parameters, whatever each worker initialised.
        GradientBucket parameters = new GradientBucket(model.parameters());
        sync.broadcastFromRank0(parameters.pack());
        parameters.unpack(1f);

        DistributedSampler sampler = new DistributedSampler(data.samples(), config.globalBatch(), config.seed());
        int[] local = new int[sampler.localBatch(world)];
        GradientBucket gradients = new GradientBucket(model.gradients());
        float average = 1f / world;
        FloatBuffer lossTotals = ByteBuffer.allocateDirect(2 * Float.BYTES)
                .order(ByteOrder.BIG_ENDIAN).asFloatBuffer();
        double[] epochLoss = new double[config.epochs()];

        for (int epoch = 0; epoch < config.epochs(); epoch++) {
            for (int step = 0; step < sampler.stepsPerEpoch(); step++) {
                sampler.localIndices(epoch, step, rank, world, local);
                model.computeGradients(data, local);
                FloatBuffer flat = gradients.pack();
                sync.sumInPlace(flat);       // one all-reduce per step, for the whole model
                gradients.unpack(average);   // sum of local means / P = mean over the global batch
                model.sgdStep(config.learningRate());
            }
            epochLoss[epoch] = globalMeanLoss(model, data, sync, lossTotals);
            listener.epochDone(epoch, epochLoss[epoch]);
        }
        return new TrainingResult(rank, world, epochLoss, model.flatParameters());
    }

    /** Each worker scores its shard (every P-th sample), then one all-reduce adds the sums and counts. */
    private static double globalMeanLoss(Mlp model, ClusterDataset data, GradientSync sync, FloatBuffer totals) {
        double local = model.lossSum(data, sync.rank(), sync.worldSize(), data.samples());
        int count = (data.samples() - sync.rank() + sync.worldSize() - 1) / sync.worldSize();
        totals.put(0, (float) local).put(1, count);
        sync.sumInPlace(totals);
        return totals.get(0) / totals.get(1);
    }
}
