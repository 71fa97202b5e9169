package io.netreduce.collectives;

/** How all-reduce combines the ranks' tensors. */
public enum ReduceOp {
    /** Element-wise sum. */
    SUM,
    /** Element-wise sum divided by the world size (the same division on every rank). */
    AVG
}
