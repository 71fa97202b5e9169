package io.netreduce.verbs.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Receive credits on real connections ({@link FrameHeader}): a SEND into a receive the
 * responder's last ACK credited completes once written with no ACK; one the credit does not
 * cover (past the posted receives, or larger than the smallest) still gets its RNR or length
 * error, as RC has it.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpReceiveCreditTest {
    private static final int SLOT = 4096;
    /** The registered buffers: four receives of a quarter each, a quarter being the credit bound. */
    private static final int BIG = (int) (4 * TcpQueuePair.CREDIT_AHEAD_BYTES);

    @ParameterizedTest
    @EnumSource(TcpProgress.class)
    void sendsIntoCreditedReceivesCompleteWithoutAnAckAndTheFirstUncreditedOneWaitsForItsReceive(TcpProgress progress)
            throws Exception {
        long seed = 0xC4ED17L;
        int credited = 7;
        try (Pair p = new Pair(progress)) {
            SplittableRandom random = new SplittableRandom(seed);
            for (int i = 0; i < credited + 1; i++) {
                p.postRecv(i, SLOT);
            }
            for (int i = 0; i < credited + 2; i++) {
                for (int k = 0; k < SLOT; k++) {
                    p.src.buffer().put(i * SLOT + k, (byte) random.nextInt());
                }
            }
            // The first SEND precedes any ACK, so no credit: its ACK grants the 8 receives.
            p.send(0, SLOT);
            p.await(1, 1);
            assertEquals(0, p.x.counters().get(Counter.CREDITED_SENDS), "no credit before the first ACK");
            for (int i = 1; i <= credited; i++) {
                p.send(i, SLOT);
            }
            p.await(credited + 1, credited + 1);
            assertEquals(credited, p.x.counters().get(Counter.CREDITED_SENDS), "sender " + p.x.counters());
            assertEquals(1, p.y.counters().get(Counter.ACKS_SENT), "the credited SENDs asked for no ACK: " + p.y.counters());
            // Receive 8 is not posted yet: the ninth SEND gets no credit, meets an RNR and waits.
            p.send(credited + 1, SLOT);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (p.x.counters().get(Counter.RNR_NAKS_RECEIVED) == 0) {
                p.pollBoth();
                assertTrue(System.nanoTime() < deadline, "no RNR NAK for a SEND past the credit: " + p.x.counters());
            }
            assertEquals(credited + 1, p.sends.size(), "the SEND past the credit completed without a receive");
            p.postRecv(credited + 1, SLOT);
            p.await(credited + 2, credited + 2);
            for (WorkCompletion wc : p.sends) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
            for (WorkCompletion wc : p.recvs) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
                assertEquals(SLOT, wc.byteLength());
            }
            assertEquals(-1, p.src.buffer().duplicate().clear().limit((credited + 2) * SLOT)
                    .mismatch(p.dst.buffer().duplicate().clear().limit((credited + 2) * SLOT)), "payload differs (seed " + seed + ")");
        }
    }

    @ParameterizedTest
    @EnumSource(TcpProgress.class)
    void aSendLargerThanTheSmallestCreditedReceiveStillMeetsItsLengthError(TcpProgress progress) throws Exception {
        try (Pair p = new Pair(progress)) {
            p.postRecv(0, SLOT);
            p.postRecv(1, SLOT);
            p.postRecv(2, SLOT);
            p.send(0, 64);
            p.await(1, 1);
            // Receive 1 is credited, but only for 4 KiB: an 8 KiB SEND goes uncredited and fails as in RC.
            p.send(1, 2 * SLOT);
            p.awaitCounts(2, 2);
            WorkCompletion send = p.sends.get(1);
            assertEquals(WcStatus.REM_INV_REQ_ERR, send.status(), send.toString());
            WorkCompletion recv = p.recvs.get(1);
            assertEquals(WcStatus.LOC_LEN_ERR, recv.status(), recv.toString());
            assertEquals(0, p.x.counters().get(Counter.CREDITED_SENDS), "sender " + p.x.counters());
        }
    }

    /**
     * A queue pair that sends both ways learns its peer's receives from the peer's SENDs:
     * x's very first SEND goes under the credit y's SEND carried, before y ever sent an ACK.
     */
    @ParameterizedTest
    @EnumSource(TcpProgress.class)
    void aSendCarriesItsSidesCreditToThePeer(TcpProgress progress) throws Exception {
        try (Pair p = new Pair(progress)) {
            for (int i = 0; i < 4; i++) {
                p.postRecv(i, SLOT);
            }
            RecvRequest r = new RecvRequest();
            r.wrId(100).sgl().add(p.src, 8 * SLOT, SLOT);
            p.x.postRecv(r);
            SendRequest s = new SendRequest();
            s.wrId(200).sgl().add(p.dst, 8 * SLOT, 64);
            p.y.postSend(s);
            // Completions: x's receive of y's SEND on x's queue, y's send (on x's ACK) on y's.
            p.awaitCounts(1, 1);
            p.send(0, SLOT);
            p.awaitCounts(2, 2);
            assertEquals(1, p.x.counters().get(Counter.CREDITED_SENDS), "x's first SEND went under y's credit: " + p.x.counters());
            assertEquals(0, p.y.counters().get(Counter.ACKS_SENT), "y acknowledged nothing: " + p.y.counters());
            for (WorkCompletion wc : p.sends) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
            for (WorkCompletion wc : p.recvs) {
                assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            }
        }
    }

    /**
     * A requester sends under credit at most {@link TcpQueuePair#CREDIT_AHEAD_BYTES} beyond
     * what its responder last reported taken, so that a sender pacing itself by completions
     * keeps no more in flight. With four receives of the bound's size posted, of four SENDs
     * of that size, one at a time, the first and third wait for their ACKs, and each ACK
     * (reporting what was taken) lets the SEND after it go under credit; without the bound
     * the first ACK would have credited all three others.
     */
    @ParameterizedTest
    @EnumSource(TcpProgress.class)
    void aCreditCoversAtMostItsBytesAhead(TcpProgress progress) throws Exception {
        int quarter = BIG / 4;
        try (Pair p = new Pair(progress)) {
            for (int i = 0; i < 4; i++) {
                RecvRequest r = new RecvRequest();
                r.wrId(i).sgl().add(p.dst, i * quarter, quarter);
                p.y.postRecv(r);
            }
            for (int i = 0; i < 4; i++) {
                p.src.buffer().put(i * quarter + 17, (byte) (i + 1));
                SendRequest s = new SendRequest();
                s.wrId(i).sgl().add(p.src, i * quarter, quarter);
                p.x.postSend(s);
                p.await(i + 1, i + 1);
            }
            assertEquals(2, p.x.counters().get(Counter.CREDITED_SENDS), "sender " + p.x.counters());
            assertEquals(2, p.y.counters().get(Counter.ACKS_SENT), "receiver " + p.y.counters());
            for (int i = 0; i < 4; i++) {
                assertEquals(i + 1, p.dst.buffer().get(i * quarter + 17), "message " + i);
            }
        }
    }

    /**
     * A SEND that met an RNR NAK goes again as soon as its receive is posted, not when the
     * responder's RNR timer (here a minute) runs out: the post sends the requester a receive
     * credit, which ends its backoff. The receives are posted at random moments after their
     * SENDs, so that some come before the NAK is written, some after, and some before the
     * SEND arrives at all; every one of the rounds must finish within the test's deadline,
     * each far shorter than one RNR timer.
     */
    @ParameterizedTest
    @EnumSource(TcpProgress.class)
    void aSendNakedForWantOfAReceiveGoesAgainOnceItIsPostedNotAfterTheRnrTimer(TcpProgress progress) throws Exception {
        long seed = 0x2026_1207L;
        int rounds = 24;
        try (Pair p = new Pair(progress, Duration.ofSeconds(60))) {
            SplittableRandom random = new SplittableRandom(seed);
            for (int i = 0; i < rounds; i++) {
                p.src.buffer().put(i * SLOT, (byte) (i + 1));
                long naks = p.x.counters().get(Counter.RNR_NAKS_RECEIVED); // before the NAK can come
                p.send(i, SLOT);
                if (i == 0 || random.nextBoolean()) {
                    // Wait for the NAK first (always in round 0, so that the test sees one).
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (p.x.counters().get(Counter.RNR_NAKS_RECEIVED) == naks) {
                        p.pollBoth();
                        assertTrue(System.nanoTime() < deadline, "no RNR NAK (seed " + seed + "): " + p.x.counters());
                    }
                } else {
                    long until = System.nanoTime() + random.nextLong(200_000);
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                }
                p.postRecv(i, SLOT);
                p.await(i + 1, i + 1);
                assertEquals(i + 1, p.dst.buffer().get(i * SLOT), "round " + i + " (seed " + seed + ")");
            }
            long nakTotal = p.x.counters().get(Counter.RNR_NAKS_RECEIVED);
            System.out.println(progress + ": " + nakTotal + " RNR NAKs in " + rounds + " rounds (seed " + seed + ")");
            assertEquals(nakTotal, p.x.counters().get(Counter.RNR_WAITS_CUT), "every backoff ended early: " + p.x.counters());
            assertEquals(nakTotal, p.y.counters().get(Counter.RNR_READY_NOTICES_SENT), "receiver " + p.y.counters());
        }
    }

    /** Two tcp devices, one queue pair each (x sends to y), and the completions both have seen. */
    private static final class Pair extends TcpPairFixture {
        final List<WorkCompletion> sends = new ArrayList<>();
        final List<WorkCompletion> recvs = new ArrayList<>();
        private final WorkCompletion[] wc = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
                new WorkCompletion()};

        Pair(TcpProgress progress) throws Exception {
            // Short RNR timer, rnrRetry 7 (forever): the test posts the missing receive itself.
            this(progress, Duration.ofMillis(1));
        }

        Pair(TcpProgress progress, Duration rnrTimer) throws Exception {
            super("127.0.0.10", "127.0.0.20", progress, 64, BIG, q -> q.minRnrTimer(rnrTimer));
        }

        void postRecv(int i, int bytes) {
            RecvRequest r = new RecvRequest();
            r.wrId(i).sgl().add(dst, i * SLOT, bytes);
            y.postRecv(r);
        }

        void send(int i, int bytes) {
            SendRequest s = new SendRequest();
            s.wrId(i).sgl().add(src, i * SLOT, bytes);
            x.postSend(s);
        }

        /** Polls both sides once (each poll drives its side's progress in polled mode). */
        void pollBoth() throws InterruptedException {
            collect(cqa.poll(wc, Duration.ofMillis(1)), sends);
            collect(cqb.poll(wc, Duration.ofMillis(1)), recvs);
        }

        private void collect(int n, List<WorkCompletion> into) {
            for (int i = 0; i < n; i++) {
                WorkCompletion w = wc[i];
                into.add(new WorkCompletion().set(w.wrId(), w.status(), w.opcode(), w.byteLength(), w.hasImmediate(),
                        w.immediate(), w.qpn(), w.detail()));
            }
        }

        /** Polls until {@code s} sends and {@code r} receives completed, all successfully. */
        void await(int s, int r) throws InterruptedException {
            awaitCounts(s, r);
            for (WorkCompletion w : sends) {
                assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
                assertEquals(WcOpcode.SEND, w.opcode());
            }
            for (WorkCompletion w : recvs) {
                assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
            }
        }

        void awaitCounts(int s, int r) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (sends.size() < s || recvs.size() < r) {
                if (System.nanoTime() > deadline) {
                    fail("waited for " + s + " sends and " + r + " receives; have " + sends + " and " + recvs
                            + "; sender " + x.counters() + ", receiver " + y.counters());
                }
                pollBoth();
            }
        }
    }
}
