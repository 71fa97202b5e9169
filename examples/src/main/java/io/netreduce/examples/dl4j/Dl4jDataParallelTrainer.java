package io.netreduce.examples.dl4j;

import io.netreduce.examples.DistributedSampler;
import io.netreduce.examples.EpochListener;
import io.netreduce.examples.GradientSync;
import io.netreduce.examples.Trainer;
import io.netreduce.examples.TrainingResult;
import org.deeplearning4j.nn.gradient.Gradient;
import org.deeplearning4j.nn.multilayer.MultiLayerNetwork;
import org.deeplearning4j.nn.workspace.LayerWorkspaceMgr;
import org.nd4j.linalg.api.ndarray.INDArray;
import org.nd4j.linalg.dataset.DataSet;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.Locale;

/**
 * Data-parallel training of a DL4J {@link MultiLayerNetwork} on Iris, by either route:
 *
 * <ul>
 *   <li>{@link Route#EXPLICIT}: the step written out. {@code computeGradientAndScore}
 *   fills the network's flattened gradient view with the gradient summed over the
 *   local examples; one all-reduce sums it over every worker's examples, in place and
 *   without a copy; the network's own updater then divides by the global batch size
 *   (averaging) and applies Adam/SGD; the parameters step by the result. Every worker
 *   feeds its updater the same bits, so updater state and parameters stay identical,
 *   and the run equals one process training on the whole batch, for any updater.</li>
 *   <li>{@link Route#ACCUMULATOR}: unchanged {@code net.fit(batch)} with an
 *   {@link AllReduceGradientsAccumulator} installed, DL4J's own extension point.</li>
 * </ul>
 */
public final class Dl4jDataParallelTrainer implements Trainer {

    public enum Route {
        EXPLICIT, ACCUMULATOR;

        public static Route parse(String name) {
            try {
                return valueOf(name.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("route must be explicit or accumulator, got '" + name + "'", e);
            }
        }
    }

    private final Dl4jConfig config;
    private final Route route;
    private final DataSet iris;
    private final MultiLayerNetwork net;

    /** Loads the data and builds the network (this is where ND4J starts, which takes a while). */
    public Dl4jDataParallelTrainer(Dl4jConfig config, Route route) {
        this.config = config;
        this.route = route;
        this.iris = IrisData.load();
        this.net = IrisNetwork.build(config);
    }

    public static TrainingResult train(Dl4jConfig config, Route route, GradientSync sync, EpochListener listener) {
        return new Dl4jDataParallelTrainer(config, route).train(sync, listener);
    }

    @Override
    public TrainingResult train(GradientSync sync, EpochListener listener) {
        int rank = sync.rank();
        int world = sync.worldSize();
        // Replicas start from rank 0's weights (a view: the sum lands in the network).
        sync.broadcastFromRank0(NdArrays.floatView(net.params()));

        DistributedSampler sampler = new DistributedSampler(iris.numExamples(), config.globalBatch(), config.seed());
        int[] local = new int[sampler.localBatch(world)];
        DataSet shard = shardOf(iris, rank, world);
        FloatBuffer lossTotals = ByteBuffer.allocateDirect(2 * Float.BYTES)
                .order(ByteOrder.BIG_ENDIAN).asFloatBuffer();
        if (route == Route.ACCUMULATOR) {
            net.setGradientsAccumulator(new AllReduceGradientsAccumulator(sync));
        }
        double[] epochLoss = new double[config.epochs()];
        for (int epoch = 0; epoch < config.epochs(); epoch++) {
            for (int step = 0; step < sampler.stepsPerEpoch(); step++) {
                sampler.localIndices(epoch, step, rank, world, local);
                DataSet batch = rows(iris, local);
                if (route == Route.EXPLICIT) {
                    explicitStep(net, batch, sync, sampler.globalBatch());
                } else {
                    net.fit(batch);
                }
            }
            net.incrementEpochCount();
            epochLoss[epoch] = globalMeanLoss(net, shard, sync, lossTotals);
            listener.epochDone(epoch, epochLoss[epoch]);
        }
        return new TrainingResult(rank, world, epochLoss, net.params().toFloatVector());
    }

    /** One SGD step with the gradient all-reduced before the network's updater sees it. */
    static void explicitStep(MultiLayerNetwork net, DataSet batch, GradientSync sync, int globalBatch) {
        net.setInput(batch.getFeatures());
        net.setLabels(batch.getLabels());
        net.computeGradientAndScore();
        Gradient gradient = net.gradient();
        INDArray flat = net.getFlattenedGradients();
        sync.sumInPlace(NdArrays.floatView(flat));      // sum over the global batch, in place
        // DL4J gradients are sums over examples; the updater divides by the batch size
        // it is given, so passing the global size averages over every worker's examples.
        net.getUpdater().update(net, gradient, net.getIterationCount(), net.getEpochCount(), globalBatch,
                LayerWorkspaceMgr.noWorkspaces());
        INDArray params = net.params();
        params.subi(flat.reshape(params.shape()));   // the step DL4J's own solver takes
        net.setIterationCount(net.getIterationCount() + 1);
    }

    private static double globalMeanLoss(MultiLayerNetwork net, DataSet shard, GradientSync sync, FloatBuffer totals) {
        int n = shard.numExamples();
        // score() is the mean loss over the examples given; weight it back into a sum
        double localSum = n == 0 ? 0 : net.score(shard) * n;
        totals.put(0, (float) localSum).put(1, n);
        sync.sumInPlace(totals);
        return totals.get(0) / totals.get(1);
    }

    /** The examples {@code rank, rank + P, ...}: this worker's share of the evaluation. */
    static DataSet shardOf(DataSet all, int rank, int world) {
        int n = (all.numExamples() - rank + world - 1) / world;
        int[] idx = new int[n];
        for (int i = 0; i < n; i++) {
            idx[i] = rank + i * world;
        }
        return rows(all, idx);
    }

    static DataSet rows(DataSet all, int[] indices) {
        return new DataSet(all.getFeatures().getRows(indices), all.getLabels().getRows(indices));
    }
}
