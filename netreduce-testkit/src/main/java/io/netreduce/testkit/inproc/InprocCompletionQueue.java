package io.netreduce.testkit.inproc;

import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.support.CompletionRing;

/** The in-process test provider's completion queue: the software providers' ring. */
final class InprocCompletionQueue extends CompletionRing {
    InprocCompletionQueue(int capacity) {
        super(capacity);
    }

    boolean add(long wrId, WcStatus status, WcOpcode opcode, int bytes, int qpn, String detail) {
        return push(wrId, status, opcode, bytes, false, 0, qpn, detail);
    }
}
