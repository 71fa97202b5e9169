package io.netreduce.verbs;

/**
 * A receive work request (ibverbs' {@code ibv_recv_wr}): an id and a scatter list that an
 * incoming SEND fills in order. Mutable and reusable like {@link SendRequest}.
 */
public final class RecvRequest {
    private long wrId;
    private final ScatterGatherList sgl;

    public RecvRequest() {
        this(4);
    }

    public RecvRequest(int maxSge) {
        sgl = new ScatterGatherList(maxSge);
    }

    public long wrId() {
        return wrId;
    }

    public RecvRequest wrId(long id) {
        this.wrId = id;
        return this;
    }

    public ScatterGatherList sgl() {
        return sgl;
    }

    public RecvRequest reset() {
        wrId = 0;
        sgl.clear();
        return this;
    }
}
