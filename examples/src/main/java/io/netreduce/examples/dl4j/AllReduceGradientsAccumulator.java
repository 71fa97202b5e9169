package io.netreduce.examples.dl4j;

import io.netreduce.examples.GradientSync;
import org.deeplearning4j.optimize.api.StepFunction;
import org.deeplearning4j.optimize.solvers.accumulation.GradientsAccumulator;
import org.deeplearning4j.optimize.solvers.accumulation.IndexedTail;
import org.nd4j.linalg.api.ndarray.INDArray;

/**
 * Plugs an all-reduce into DL4J's own extension point for shared gradients: install it
 * with {@code net.setGradientsAccumulator(...)} and plain {@code net.fit(...)} becomes
 * data-parallel. DL4J's solver hands the accumulator the flattened update after the
 * network's updater has run ({@code storeUpdate}), then asks it to apply an update to
 * the parameters ({@code applyUpdate}); this one sums the update across workers in
 * place, divides by the number of workers, and applies it, so every replica applies
 * the same bits.
 *
 * <p>Because DL4J calls the accumulator after the updater, what is averaged is each
 * worker's update, not its gradient. For updaters linear in the gradient (SGD,
 * momentum) that is the same thing and training matches a single process on the
 * whole batch; for Adam the replicas still stay identical but no longer equal the
 * single-process run. {@link Dl4jDataParallelTrainer} averages gradients before the
 * updater and is exact for every updater.
 */
public final class AllReduceGradientsAccumulator implements GradientsAccumulator {

    private static final long serialVersionUID = 1L;

    private final transient GradientSync sync;

    public AllReduceGradientsAccumulator(GradientSync sync) {
        this.sync = sync;
    }

    @Override
    public void storeUpdate(INDArray update, int iteration, int epoch) {
        sync.sumInPlace(NdArrays.floatView(update));
        update.divi(sync.worldSize());
    }

    @Override
    public void applyUpdate(StepFunction function, INDArray params, INDArray updates, boolean isFinalStep) {
        function.step(params, updates);
    }

    @Override
    public void applyUpdate(StepFunction function, INDArray params, INDArray updates, double alpha) {
        function.step(params, updates, alpha);
    }

    @Override
    public void receiveUpdate(INDArray array) {
        throw new UnsupportedOperationException("updates arrive through the all-reduce in storeUpdate");
    }

    @Override
    public boolean hasAnything() {
        // Nothing is ever pending: the solver must not apply a stale update before a step.
        return false;
    }

    @Override
    public void setExternalSource(IndexedTail source) {
        throw new UnsupportedOperationException("external update sources are not used with all-reduce");
    }

    @Override
    public IndexedTail getExternalSource() {
        return null;
    }

    @Override
    public void markExternalUpdates(boolean updatesAvailable) {
        // no external updates
    }

    @Override
    public void reset() {
        // no state between steps
    }

    @Override
    public void touch() {
        // no state between steps
    }
}
