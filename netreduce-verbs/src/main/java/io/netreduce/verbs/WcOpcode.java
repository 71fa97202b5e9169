package io.netreduce.verbs;

/** What a {@link WorkCompletion} completes (ibverbs' {@code ibv_wc_opcode} subset). */
public enum WcOpcode {
    /** A SEND or SEND_WITH_IMM posted on the send queue. */
    SEND,
    /** An RDMA_WRITE or RDMA_WRITE_WITH_IMM posted on the send queue. */
    RDMA_WRITE,
    /** A receive request consumed by an incoming SEND or SEND_WITH_IMM. */
    RECV,
    /** A receive request consumed by an incoming RDMA_WRITE_WITH_IMM (no data lands in it). */
    RECV_RDMA_WITH_IMM
}
