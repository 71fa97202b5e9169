package io.netreduce.verbs.support;

import io.netreduce.verbs.Access;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.verbs.ProtectionDomain;
import io.netreduce.verbs.ScatterGatherList;
import io.netreduce.verbs.VerbsException;

/**
 * The one check every provider applies to a posted scatter-gather list, at post time, with
 * the same words: a bad list is refused by {@code postSend}/{@code postRecv} with a
 * {@link VerbsException} naming the queue pair, the SGE and its lkey, before anything is
 * queued. (A NIC would report most of these later, as a LOC_PROT_ERR completion; a caller
 * is better served by the stack trace of the post that was wrong.)
 */
public final class ScatterGather {
    private ScatterGather() {
    }

    /**
     * Throws unless {@code sgl} has at most {@code maxSge} elements, each naming an open
     * region of {@code pd} (with LOCAL_WRITE for a receive); returns the list's total length.
     */
    public static long check(int qpn, ScatterGatherList sgl, int maxSge, ProtectionDomain pd, boolean receive) {
        String what = receive ? "receive" : "send";
        if (sgl.count() > maxSge) {
            throw new VerbsException("QP " + qpn + ": " + what + " request has " + sgl.count()
                    + " SGEs, the queue pair allows " + maxSge);
        }
        long total = 0;
        for (int i = 0; i < sgl.count(); i++) {
            MemoryRegion mr = sgl.region(i);
            if (!(mr instanceof LocalRegion r) || r.protectionDomain() != pd) {
                throw new VerbsException("QP " + qpn + ": SGE " + i + " of the " + what + " request uses lkey "
                        + mr.lkey() + ", a memory region of another protection domain or device");
            }
            if (!r.isOpen()) {
                throw new VerbsException("QP " + qpn + ": SGE " + i + " of the " + what + " request uses lkey "
                        + mr.lkey() + ", which is deregistered");
            }
            if (receive && !mr.access().contains(Access.LOCAL_WRITE)) {
                throw new VerbsException("QP " + qpn + ": SGE " + i + " of the receive request uses lkey " + mr.lkey()
                        + ", registered without LOCAL_WRITE access");
            }
            total += sgl.length(i);
        }
        return total;
    }
}
