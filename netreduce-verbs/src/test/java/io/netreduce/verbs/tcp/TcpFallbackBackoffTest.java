package io.netreduce.verbs.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.RecvRequest;
import io.netreduce.verbs.SendRequest;
import io.netreduce.verbs.WcStatus;
import io.netreduce.verbs.WorkCompletion;
import io.netreduce.verbs.support.FallbackProgress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The device's fallback in polled progress, on real connections: it keeps answering for a
 * queue pair nobody polls, and looks at one that has nothing to do less and less often
 * (up to {@link FallbackProgress#LONGEST_LOOK_NANOS}) instead of waking its thread every
 * few milliseconds for as long as the queue pair lives.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpFallbackBackoffTest {
    private static final Duration ACK_TIMEOUT = Duration.ofMillis(400);
    private static final long IDLE_MILLIS = 700;

    @Test
    void anIdleQueuePairIsLookedAtLessAndLessOften() throws Exception {
        try (Pair p = new Pair()) {
            p.postRecv();
            long x0 = p.x.counters().get(Counter.FALLBACK_DRIVES);
            long y0 = p.y.counters().get(Counter.FALLBACK_DRIVES);
            Thread.sleep(IDLE_MILLIS); // nobody polls either side
            long x = p.x.counters().get(Counter.FALLBACK_DRIVES) - x0;
            long y = p.y.counters().get(Counter.FALLBACK_DRIVES) - y0;
            // Every 2 ms after the first 10 (the fallback without a back-off) would be about 345 looks;
            // doubling from 2 ms to 32 ms takes about 25.
            long most = 60;
            assertTrue(x >= 3 && x <= most, "looks at the idle sender over " + IDLE_MILLIS + " ms: " + x);
            assertTrue(y >= 3 && y <= most, "looks at the idle receiver over " + IDLE_MILLIS + " ms: " + y);
        }
    }

    /**
     * After a long idle spell, the receiver's application still polls nothing: its fallback,
     * backed off, must still read the SEND and ACK it (the first SEND of a connection goes
     * without a receive credit, so its completion waits for that ACK).
     */
    @Test
    void aRequestToABackedOffQueuePairIsStillAnsweredByTheFallback() throws Exception {
        try (Pair p = new Pair()) {
            p.postRecv();
            Thread.sleep(IDLE_MILLIS);
            sendAnsweredByTheFallback(p);
        }
    }

    /**
     * While an application keeps polling, the fallback looks at its queue pairs only every
     * {@link FallbackProgress#LONGEST_LOOK_NANOS} (or quarter ACK timeout). Once the polls
     * stop, it must still take over: a SEND that arrives then is read and ACKed within the
     * sender's ACK timeout.
     */
    @Test
    void aQueuePairWhoseApplicationStopsPollingIsDrivenByTheFallback() throws Exception {
        try (Pair p = new Pair()) {
            p.postRecv();
            WorkCompletion[] wc = {new WorkCompletion()};
            long pollUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(IDLE_MILLIS / 2);
            while (System.nanoTime() < pollUntil) { // the receiver's application polls, and nothing comes
                assertEquals(0, p.cqb.poll(wc, Duration.ofMillis(2)));
            }
            sendAnsweredByTheFallback(p);
        }
    }

    /** Sends one SEND while only the sender polls: the receiver's fallback must read and ACK it. */
    private static void sendAnsweredByTheFallback(Pair p) throws InterruptedException {
        long looks = p.y.counters().get(Counter.FALLBACK_DRIVES);
        p.src.buffer().putLong(0, 0x5EEDL);
        SendRequest s = new SendRequest();
        s.wrId(7).sgl().add(p.src, 0, 64);
        p.x.postSend(s);
        WorkCompletion[] wc = {new WorkCompletion()};
        long deadline = System.nanoTime() + ACK_TIMEOUT.toNanos();
        int n = 0;
        while (n == 0) { // only the sender polls
            if (System.nanoTime() > deadline) {
                fail("the SEND was not ACKed within the ACK timeout; sender " + p.x.counters() + ", receiver "
                        + p.y.counters());
            }
            n = p.cqa.poll(wc, Duration.ofMillis(5));
        }
        assertEquals(WcStatus.SUCCESS, wc[0].status(), wc[0].toString());
        assertEquals(7, wc[0].wrId());
        assertEquals(0, p.x.counters().get(Counter.CREDITED_SENDS), "the first SEND needed its ACK");
        assertTrue(p.y.counters().get(Counter.FALLBACK_DRIVES) > looks, "the receiver's fallback read it: "
                + p.y.counters());
        assertEquals(1, p.cqb.poll(wc, Duration.ofSeconds(5)), "the receive completed");
        assertEquals(WcStatus.SUCCESS, wc[0].status(), wc[0].toString());
        assertEquals(0x5EEDL, p.dst.buffer().getLong(0));
    }

    private static final class Pair extends TcpPairFixture {
        Pair() throws Exception {
            super("127.0.0.11", "127.0.0.21", TcpProgress.POLL, 8, 4096, q -> q.ackTimeout(ACK_TIMEOUT));
        }

        void postRecv() {
            RecvRequest r = new RecvRequest();
            r.wrId(1).sgl().add(dst, 0, 4096);
            y.postRecv(r);
        }
    }
}
