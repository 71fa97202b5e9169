package io.netreduce.verbs.soft;

import io.netreduce.verbs.ScatterGatherList;
import io.netreduce.verbs.SendOpcode;
import io.netreduce.verbs.SendRequest;

/**
 * A send work-queue entry: the provider's own copy of a posted {@link SendRequest}, plus
 * the PSN range its packets occupy once the requester starts it. Preallocated in the send
 * ring and refilled on every post.
 */
final class SendWqe {
    long wrId;
    SendOpcode opcode;
    final ScatterGatherList sgl;
    int immediate;
    long remoteAddress;
    int rkey;
    boolean signaled;
    boolean solicited;
    /** Message length in bytes. */
    int length;
    /** Packets the message needs at the queue pair's MTU (at least 1). */
    int packets;
    /** Whether PSNs have been assigned (first transmission happened). */
    boolean started;
    int firstPsn;
    int lastPsn;

    SendWqe(int maxSge) {
        sgl = new ScatterGatherList(maxSge);
    }

    void fill(SendRequest r, int mtu) {
        wrId = r.wrId();
        opcode = r.opcode();
        sgl.copyFrom(r.sgl());
        immediate = r.immediate();
        remoteAddress = r.remoteAddress();
        rkey = r.rkey();
        signaled = r.signaled();
        solicited = r.solicited();
        length = (int) r.sgl().totalLength();
        packets = Math.max(1, (length + mtu - 1) / mtu);
        started = false;
    }
}
