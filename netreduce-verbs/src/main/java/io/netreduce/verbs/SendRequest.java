package io.netreduce.verbs;

/**
 * A send work request (ibverbs' {@code ibv_send_wr}). Mutable and reusable: fill it, post
 * it, refill it; the provider copies what it needs during {@link QueuePair#postSend}.
 * The memory the gather list points at must stay untouched until the request completes.
 */
public final class SendRequest {
    private long wrId;
    private SendOpcode opcode = SendOpcode.SEND;
    private final ScatterGatherList sgl;
    private int immediate;
    private long remoteAddress;
    private int rkey;
    private boolean signaled = true;
    private boolean solicited;

    public SendRequest() {
        this(4);
    }

    public SendRequest(int maxSge) {
        sgl = new ScatterGatherList(maxSge);
    }

    public long wrId() {
        return wrId;
    }

    public SendRequest wrId(long id) {
        this.wrId = id;
        return this;
    }

    public SendOpcode opcode() {
        return opcode;
    }

    public SendRequest opcode(SendOpcode op) {
        this.opcode = java.util.Objects.requireNonNull(op, "opcode");
        return this;
    }

    /** The gather list: the message is the concatenation of its elements. */
    public ScatterGatherList sgl() {
        return sgl;
    }

    public int immediate() {
        return immediate;
    }

    public SendRequest immediate(int imm) {
        this.immediate = imm;
        return this;
    }

    public long remoteAddress() {
        return remoteAddress;
    }

    public int rkey() {
        return rkey;
    }

    /** Target of an RDMA WRITE: the remote region's address (plus an offset) and its rkey. */
    public SendRequest remote(long address, int rkey) {
        this.remoteAddress = address;
        this.rkey = rkey;
        return this;
    }

    public boolean signaled() {
        return signaled;
    }

    /** Whether a successful completion is reported (errors always are). Default true. */
    public SendRequest signaled(boolean s) {
        this.signaled = s;
        return this;
    }

    public boolean solicited() {
        return solicited;
    }

    public SendRequest solicited(boolean s) {
        this.solicited = s;
        return this;
    }

    /** Resets the request to a plain signaled SEND with an empty gather list. */
    public SendRequest reset() {
        wrId = 0;
        opcode = SendOpcode.SEND;
        sgl.clear();
        immediate = 0;
        remoteAddress = 0;
        rkey = 0;
        signaled = true;
        solicited = false;
        return this;
    }
}
