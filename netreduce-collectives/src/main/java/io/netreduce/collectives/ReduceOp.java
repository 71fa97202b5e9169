package io.netreduce.collectives;

/** How all-reduce combines the ranks' tensors. */
public enum ReduceOp {
    /** Element-wise sum. */
    SUM,
    /** Element-wise sum divided by the world size (the same division on every rank). */
    AVG,
    /**
     * Element-wise maximum ({@link Math#max(float, float)}: NaN wins, +0.0 over -0.0). Ring
     * algorithm only: a NetReduce switch can only add, so a netreduce communicator refuses it.
     */
    MAX,
    /** Element-wise minimum ({@link Math#min(float, float)}); ring algorithm only, as {@link #MAX}. */
    MIN;

    /** True for the operations a NetReduce switch computes (it only adds). */
    public boolean isSum() {
        return this == SUM || this == AVG;
    }
}
