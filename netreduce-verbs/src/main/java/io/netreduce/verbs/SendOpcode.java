package io.netreduce.verbs;

/** Operations a {@link SendRequest} can carry (ibverbs' {@code ibv_wr_opcode} subset for RC). */
public enum SendOpcode {
    SEND(false, false),
    SEND_WITH_IMM(false, true),
    RDMA_WRITE(true, false),
    RDMA_WRITE_WITH_IMM(true, true);

    private final boolean rdmaWrite;
    private final boolean immediate;

    SendOpcode(boolean rdmaWrite, boolean immediate) {
        this.rdmaWrite = rdmaWrite;
        this.immediate = immediate;
    }

    /** True for the RDMA WRITE variants, which need a remote address and rkey. */
    public boolean isRdmaWrite() {
        return rdmaWrite;
    }

    /** True when the operation carries 32 bits of immediate data. */
    public boolean hasImmediate() {
        return immediate;
    }
}
