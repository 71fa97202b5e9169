package io.netreduce.verbs;

/** Memory-region access rights, as ibverbs' {@code IBV_ACCESS_*} flags. */
public enum Access {
    /** The local NIC may write into the region (required for RECV targets). */
    LOCAL_WRITE,
    /** A remote peer may RDMA WRITE into the region using its rkey. */
    REMOTE_WRITE,
    /** A remote peer may RDMA READ the region using its rkey. */
    REMOTE_READ
}
