package io.netreduce.examples;

/** Told the loss over the whole data set after every epoch (on every worker). */
@FunctionalInterface
public interface EpochListener {

    EpochListener NONE = (epoch, loss) -> { };

    void epochDone(int epoch, double loss);
}
