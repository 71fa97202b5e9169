package io.netreduce.verbs.soft;

import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.ScatterGatherList;

/** A receive work-queue entry: the provider's copy of a posted {@link RecvRequest}. */
final class RecvWqe {
    long wrId;
    final ScatterGatherList sgl;
    long capacity;

    RecvWqe(int maxSge) {
        sgl = new ScatterGatherList(maxSge);
    }

    void fill(RecvRequest r) {
        wrId = r.wrId();
        sgl.copyFrom(r.sgl());
        capacity = r.sgl().totalLength();
    }
}
