package io.netreduce.collectives.engine;

import io.netreduce.collectives.CollectiveException;
import io.netreduce.collectives.CommunicatorConfig.Agreement;
import io.netreduce.collectives.rendezvous.StoreClient;
import io.netreduce.collectives.algorithm.HostTimeoutException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the ranks agree on about each collective, through the rendezvous store: every call
 * is announced with its description (operation and tensor length), the store compares them
 * across ranks, and this class turns its verdicts, and any failure, into the clearest
 * error available on every rank.
 *
 * <p>Agreement modes (see {@link io.netreduce.collectives.CommunicatorConfig.Agreement}):
 * the operation is announced without waiting; in ASYNC mode a call then only requires the
 * previous operation's verdict when it ends (by then it has normally long arrived, so
 * nothing waits), and looks at its own without waiting; STRICT waits for its own. Like
 * NCCL and Gloo we trust the data path for speed, but unlike them a mismatch never goes
 * unreported: the ring's messages carry the tensor length (caught at the first message), a
 * netreduce rank waiting for messages that never come sees the verdict through its
 * progress guard, and a mismatch invisible to the data path (equal lengths) fails the next
 * call at the latest on every rank, or close() after the last one. OFF announces nothing
 * for the ring (the data path and failure reports remain); netreduce still announces each
 * call for its start gate.
 *
 * <p>Used by the thread running the operation (and its progress guard).
 */
final class OperationAgreement {
    private static final Logger LOG = LoggerFactory.getLogger(OperationAgreement.class);
    /** How long a failing rank waits for the verdict on its operation, to report the real cause. */
    private static final long VERDICT_WAIT_MS = 1000;

    private final StoreClient store;
    private final int rank;
    private final Agreement mode;
    private final long timeoutMillis;

    OperationAgreement(StoreClient store, int rank, Agreement mode, Duration timeout) {
        this.store = store;
        this.rank = rank;
        this.mode = mode;
        this.timeoutMillis = timeout.toMillis();
    }

    /** Before operation {@code seq} moves data: fail on a known mismatch, announce it, and for netreduce start together. */
    void beforeBody(long seq, CharSequence name, boolean netreduce) {
        if (mode == Agreement.OFF && !netreduce) {
            return;
        }
        failOnEarlierMismatch(seq, name);
        // Only netreduce uses the go-ahead (see awaitEveryRankArrived): for the ring it would
        // cost every call one more wake-up of the store reader thread.
        store.announce(seq, name, netreduce);
        if (netreduce) {
            awaitEveryRankArrived(seq, name);
        }
    }

    /** After operation {@code seq} moved its data: the verdicts this mode requires before returning. */
    void afterBody(long seq, CharSequence name) {
        if (mode == Agreement.OFF) {
            return;
        }
        if (mode == Agreement.STRICT) {
            requireVerdict(seq, seq, name);
        } else {
            requireVerdict(seq - 1, seq, name);
            failOnEarlierMismatch(seq, name);
        }
    }

    /** From the data path's progress guard: abort on a failure reported by any rank, or a mismatch. */
    void checkProgress(long seq, CharSequence name) {
        String failure = store.failure();
        if (failure != null) {
            throw new CollectiveException("rank " + rank + ": collective #" + seq + " " + name + " aborted: " + failure);
        }
        failOnEarlierMismatch(seq, name);
    }

    /**
     * Through the switch a rank's SEND is acknowledged only once every rank has sent that
     * message, so a rank arriving late by more than the transport's retry budget (ACK
     * timeout × 8) would make the early ones give up, and no rule local to the early rank
     * (time since its last call, say) can tell that another rank is about to compute for a
     * minute. So every rank starts only once all have announced the operation, which costs
     * nothing for the early ranks (they must wait for the last one anyway) and nothing for
     * a rank the store already told it is the last ({@link StoreClient#othersAnnounced});
     * only ranks arriving at the same moment pay one store round trip.
     */
    private void awaitEveryRankArrived(long seq, CharSequence name) {
        if (!store.othersAnnounced(seq)) {
            requireVerdict(seq, seq, name);
        }
    }

    /** Waits for the verdict on operation {@code seq} while operation {@code current} runs. */
    private void requireVerdict(long seq, long current, CharSequence name) {
        if (seq <= 0) {
            return;
        }
        String v = store.awaitOpVerdict(seq, timeoutMillis);
        if (v == null) {
            throw new HostTimeoutException("no agreement on collective #" + seq + " within " + timeoutMillis + " ms");
        }
        if (!StoreClient.OK.equals(v)) {
            throw new CollectiveException(explainVerdict(Math.min(seq, store.firstBadOp()), v, current, name));
        }
    }

    /** Throws if the store has already reported a mismatch of operation {@code seq} or an earlier one. */
    private void failOnEarlierMismatch(long seq, CharSequence name) {
        if (mode == Agreement.OFF) {
            return; // nothing is compared, except netreduce's start gate, which is checked where it waits
        }
        long bad = store.firstBadOp();
        if (bad <= seq) {
            throw new CollectiveException(explainVerdict(bad, store.opVerdict(bad), seq, name));
        }
    }

    /** Describes verdict {@code v} on operation {@code seq}; {@code current}/{@code name} name the running one. */
    private String explainVerdict(long seq, String v, long current, CharSequence name) {
        if (v != null && v.startsWith("MISMATCH")) {
            return "rank " + rank + ": ranks called collective #" + seq + " with different tensors or operations: "
                    + v.substring("MISMATCH".length()).trim();
        }
        return "rank " + rank + ": collective #" + seq + (seq == current ? " " + name : "")
                + " aborted: " + (v == null ? "no verdict" : v.startsWith("FAILED ") ? v.substring(7) : v);
    }

    /**
     * Turns any failure of operation {@code seq} into the clearest message available: a
     * mismatch if the agreement check says so, else the failure another rank reported, else
     * this rank's own error (which is then reported to every other rank, naming this one).
     */
    CollectiveException explain(RuntimeException e, long seq, CharSequence name) {
        String v = mode == Agreement.OFF ? null : store.awaitOpVerdict(seq, VERDICT_WAIT_MS);
        if (v != null && v.startsWith("MISMATCH")) {
            String message = explainVerdict(Math.min(seq, store.firstBadOp()), v, seq, name);
            if (store.failure() == null) {
                store.fail(message);
            }
            return new CollectiveException(message, e);
        }
        String reported = store.failure();
        if (e instanceof CollectiveException ce) {
            if (reported == null) {
                store.fail(ce.getMessage());
            }
            return ce;
        }
        String message = "rank " + rank + ": collective #" + seq + " " + name + " failed: " + e.getMessage();
        if (e instanceof HostTimeoutException && mode != Agreement.OFF) {
            String missing = "";
            try {
                missing = store.missing("op/" + seq, Duration.ofSeconds(2));
            } catch (CollectiveException ignored) {
                // the store is gone too: the message says what we know
            }
            if (!missing.isEmpty() && !"[]".equals(missing)) {
                message += "; ranks that never started it: " + missing;
            }
        }
        if (reported != null) {
            message += "; the group reports: " + reported;
        } else {
            store.fail(message);
        }
        return new CollectiveException(message, e);
    }

    /**
     * In ASYNC mode the last call returned before its verdict: close() waits for it here, so
     * that a mismatch in the very last collective is still reported and not lost. Null when
     * there is nothing to report.
     */
    String lastVerdictProblem(long lastSeq, CharSequence name) {
        if (mode != Agreement.ASYNC || lastSeq == 0) {
            return null;
        }
        String v = store.awaitOpVerdict(lastSeq, Math.min(timeoutMillis, 10_000));
        if (v == null) {
            LOG.warn("rank {}: no verdict on the last collective #{} ({}) before closing", rank, lastSeq, name);
            return null;
        }
        if (v.startsWith("MISMATCH")) {
            String message = explainVerdict(Math.min(lastSeq, store.firstBadOp()), v, lastSeq, name)
                    + " (reported on close)";
            LOG.error(message);
            return message;
        }
        return null;
    }
}
