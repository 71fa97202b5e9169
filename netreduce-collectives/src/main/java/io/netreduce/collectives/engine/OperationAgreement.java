package io.netreduce.collectives.engine;

import io.netreduce.collectives.CollectiveException;
import io.netreduce.collectives.CommunicatorConfig.Agreement;
import io.netreduce.collectives.algorithm.CallMismatchException;
import io.netreduce.collectives.algorithm.CollectiveAlgorithm;
import io.netreduce.collectives.algorithm.CollectiveCall;
import io.netreduce.collectives.algorithm.HostTimeoutException;
import io.netreduce.collectives.rendezvous.StoreClient;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the ranks agree on about each collective, and the clearest error on every rank when
 * they do not or when anything fails.
 *
 * <p>Where a call is compared:
 * <ul>
 *   <li>in the data path, for an algorithm that {@link CollectiveAlgorithm#comparesCallsInBand()
 *       carries every rank's call in its messages} (the ring; netreduce, whose switch
 *       compares), in {@link Agreement#IN_BAND} mode: nothing goes to the rendezvous store
 *       per call;</li>
 *   <li>at the store otherwise: every call is announced with its description, and the
 *       store compares them across ranks. In {@link Agreement#STRICT} mode a call returns
 *       only with its own verdict; an algorithm that does not carry calls otherwise
 *       requires the previous call's verdict, and the last one's at close.</li>
 * </ul>
 *
 * <p>When the data path finds a neighbour's call differs, that rank reports a mismatch to
 * the group ({@link StoreClient#reportMismatch}); every rank that fails then announces its
 * own call to the store and waits briefly for the verdict, so that each rank's error lists
 * every rank's call, e.g. {@code rank 2: allReduce(5000)}. Only failures, and calls that wait
 * unusually long, pay that round.
 *
 * <p>Used by the thread running the operation (and its progress guard).
 */
final class OperationAgreement {
    private static final Logger LOG = LoggerFactory.getLogger(OperationAgreement.class);
    /** How long a failing rank waits for the verdict on its operation, to report the real cause. */
    private static final long VERDICT_WAIT_MS = 1000;

    private final StoreClient store;
    private final int rank;
    private final long timeoutMillis;
    /** Every call is announced to the store. */
    private final boolean announces;
    /** A call returns only with its own verdict (else with the previous call's). */
    private final boolean ownVerdict;
    /** The call's description, rebuilt in place when needed (no allocation). */
    private final StringBuilder name = new StringBuilder(64);
    /** The last sequence number announced to the store. */
    private long announced;
    /** How long a call compared in the data path waits before it is announced after all. */
    private final long lateAnnounceNanos;
    private static final long LATE_ANNOUNCE_MAX_NANOS = 1_000_000_000L;

    OperationAgreement(StoreClient store, int rank, Agreement mode, CollectiveAlgorithm algorithm, Duration timeout) {
        this.store = store;
        this.rank = rank;
        this.timeoutMillis = timeout.toMillis();
        this.announces = mode == Agreement.STRICT || !algorithm.comparesCallsInBand();
        this.ownVerdict = mode == Agreement.STRICT;
        this.lateAnnounceNanos = Math.min(timeout.toNanos() / 4, LATE_ANNOUNCE_MAX_NANOS);
    }

    /** True if calls go through the store in steady state (for the start-up log line). */
    boolean announcesEveryCall() {
        return announces;
    }

    /** Before {@code call} moves data: fail on a known mismatch, and announce it. */
    void beforeBody(CollectiveCall call) {
        if (!announces) {
            return;
        }
        failOnEarlierMismatch(call);
        announce(call);
    }

    /** After {@code call} moved its data: the verdicts this mode requires before returning. */
    void afterBody(CollectiveCall call) {
        if (!announces) {
            return;
        }
        if (ownVerdict) {
            requireVerdict(call.seq(), call);
        } else {
            requireVerdict(call.seq() - 1, call);
            failOnEarlierMismatch(call);
        }
    }

    /**
     * From the data path's progress guard: abort on a failure reported by any rank, or a
     * mismatch. A mismatch reported in a later operation lets this call go on while it moves
     * (for up to {@link #VERDICT_WAIT_MS} without progress): the ranks that found it have
     * finished this call, so a rank that is slower can finish it too, and then fail the next
     * one with the comparison of every rank's call, as the others do, rather than abort this
     * one with a neighbour's report. A call compared in the data path that has waited
     * {@link #lateAnnounceNanos} is announced to the store after all (once), so that if it
     * times out the error can name the ranks that never started it; calls that complete
     * sooner, nearly all of them, never are.
     */
    void checkProgress(CollectiveCall call, long idleNanos) {
        String failure = store.failure();
        boolean laterMismatch = store.mismatchOp() > call.seq() && idleNanos < VERDICT_WAIT_MS * 1_000_000L;
        if (failure != null && !laterMismatch) {
            throw new CollectiveException("rank " + rank + ": collective #" + call.seq() + " " + describe(call)
                    + " aborted: " + failure);
        }
        if (!announces && idleNanos > lateAnnounceNanos) {
            announce(call);
        }
        if (announced == call.seq()) {
            failOnEarlierMismatch(call);
        }
    }

    private void announce(CollectiveCall call) {
        if (announced < call.seq()) {
            announced = call.seq();
            store.announce(call.seq(), describe(call));
        }
    }

    private CharSequence describe(CollectiveCall call) {
        name.setLength(0);
        return call.describe(name);
    }

    /** Waits for the verdict on operation {@code seq} while {@code current} runs. */
    private void requireVerdict(long seq, CollectiveCall current) {
        if (seq <= 0) {
            return;
        }
        String v = store.awaitOpVerdict(seq, timeoutMillis);
        if (v == null) {
            throw new HostTimeoutException("no agreement on collective #" + seq + " within " + timeoutMillis + " ms");
        }
        if (!StoreClient.OK.equals(v)) {
            throw new CollectiveException(explainVerdict(Math.min(seq, store.firstBadOp()), v, current));
        }
    }

    /** Throws if the store has already reported a mismatch of the current operation or an earlier one. */
    private void failOnEarlierMismatch(CollectiveCall call) {
        long bad = store.firstBadOp();
        if (bad <= call.seq()) {
            throw new CollectiveException(explainVerdict(bad, store.opVerdict(bad), call));
        }
    }

    /** Describes verdict {@code v} on operation {@code seq} while {@code current} runs. */
    private String explainVerdict(long seq, String v, CollectiveCall current) {
        if (isMismatch(v)) {
            return "rank " + rank + ": ranks called collective #" + seq + " with different tensors or operations: "
                    + v.substring("MISMATCH".length()).trim();
        }
        return "rank " + rank + ": collective #" + seq + (seq == current.seq() ? " " + describe(current) : "")
                + " aborted: " + (v == null ? "no verdict" : v.startsWith("FAILED ") ? v.substring(7) : v);
    }

    private static boolean isMismatch(String verdict) {
        return verdict != null && verdict.startsWith("MISMATCH");
    }

    /**
     * Turns any failure of {@code call} into the clearest message available: every rank's
     * call if the ranks called different collectives, else the failure another rank
     * reported, else this rank's own error (which is then reported to every other rank,
     * naming this one).
     */
    CollectiveException explain(RuntimeException e, CollectiveCall call) {
        String own = e instanceof CollectiveException ? e.getMessage()
                : "rank " + rank + ": collective #" + call.seq() + " " + describe(call) + " failed: " + e.getMessage();
        if (e instanceof HostTimeoutException) {
            // Ranks still waiting announced their calls after lateAnnounceNanos: the absent
            // ones can be named in what the group is told, so the ranks it aborts name them too.
            announce(call);
            own += neverStarted(call);
        }
        // Tell the group first, so that every rank stops waiting for this one's data.
        if (store.failure() == null) {
            if (e instanceof CallMismatchException) {
                store.reportMismatch(call.seq(), own);
            } else {
                store.fail(own);
            }
        }
        // Every failing rank tells the store its call, and waits briefly for the comparison:
        // a mismatch shows in the data path in many ways (a neighbour's header, a message
        // longer than the receive posted for it), and only the comparison names every
        // rank's call. The store answers at once if a rank is gone.
        announce(call);
        String v = store.awaitCheckVerdict(call.seq(), VERDICT_WAIT_MS);
        if (isMismatch(v)) {
            return new CollectiveException(explainVerdict(Math.min(call.seq(), store.firstBadOp()), v, call), e);
        }
        if (e instanceof CollectiveException ce) {
            return ce;
        }
        String message = own;
        String reported = store.failure();
        if (reported != null && !reported.equals(own)) {
            message += "; the group reports: " + reported;
        }
        return new CollectiveException(message, e);
    }

    /** "; ranks that never started it: [1]", or "" if every rank did (or the store is gone). */
    private String neverStarted(CollectiveCall call) {
        String missing = "";
        try {
            missing = store.missing("op/" + call.seq(), Duration.ofSeconds(2));
        } catch (CollectiveException ignored) {
            // the store is gone too: the message says what we know
        }
        return missing.isEmpty() || "[]".equals(missing) ? "" : "; ranks that never started it: " + missing;
    }

    /**
     * When calls returned before their verdict (an algorithm that does not carry calls, not
     * strict), close() waits for the last one here, so that a mismatch in the very
     * last collective is still reported. Null when there is nothing to report.
     */
    String lastVerdictProblem(CollectiveCall last) {
        if (!announces || ownVerdict || last.seq() == 0) {
            return null;
        }
        String v = store.awaitOpVerdict(last.seq(), Math.min(timeoutMillis, 10_000));
        if (v == null) {
            LOG.warn("rank {}: no verdict on the last collective #{} ({}) before closing", rank, last.seq(),
                    describe(last));
            return null;
        }
        if (isMismatch(v)) {
            String message = explainVerdict(Math.min(last.seq(), store.firstBadOp()), v, last) + " (reported on close)";
            LOG.error(message);
            return message;
        }
        return null;
    }
}
