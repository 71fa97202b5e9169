package io.netreduce.collectives;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.verbs.Capability;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A rank that arrives at a collective later than its peers' transport retry budget (ACK
 * timeout x 8): through the switch the early ranks' sends wait for the late rank's
 * packets, and the switch answers their retransmissions "not ready" instead of letting
 * them run out of retries. No start gate through the rendezvous store is needed for it,
 * and every rank gets the exact sum. The ring waits the same way at the receivers.
 */
@Timeout(120)
@SuppressWarnings("try")
class LateRankTest {
    private static final Duration ACK_TIMEOUT = Duration.ofMillis(40);
    /** Longer than the retry budget of 8 x 40 ms. */
    private static final long LATE_MILLIS = 1_500;

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netreduce", "ring"})
    void aRankLaterThanTheRetryBudgetKeepsTheOthersWaitingNotFailing(String algorithm) throws Exception {
        Assumptions.assumeTrue(TestGroup.capabilities().has(Capability.PATH_MTU_PACKETS),
                "a transport of packets with RC retransmission timers is needed to outwait its retry budget");
        int p = 3;
        int n = 3000;
        try (TestGroup g = TestGroup.open(p, TestGroup.template(algorithm).ackTimeout(ACK_TIMEOUT)
                .timeout(Duration.ofSeconds(20)), 1L << 30)) {
            long[] before = new long[p];
            for (int r = 0; r < p; r++) {
                before[r] = g.comms.get(r).counters().rendezvousMessages();
            }
            List<Object> out = g.onEveryRank((r, c) -> {
                for (int call = 0; call < 3; call++) {
                    if (r == 2 && call == 1) {
                        Thread.sleep(LATE_MILLIS); // computes for longer than its peers can retry
                    }
                    FloatBuffer t = FloatBuffer.allocate(n);
                    for (int i = 0; i < n; i++) {
                        t.put(i, r + i % 17 + call);
                    }
                    c.allReduce(t);
                    for (int i = 0; i < n; i++) {
                        float expected = 3 + 3 * (i % 17) + 3 * call;
                        if (t.get(i) != expected) {
                            throw new AssertionError("rank " + r + " call " + call + " element " + i + ": " + t.get(i)
                                    + " != " + expected);
                        }
                    }
                }
                return null;
            }, 60);
            for (int r = 0; r < p; r++) {
                assertNull(out.get(r), "rank " + r);
                CommunicatorCounters c = g.comms.get(r).counters();
                // At most the one announcement of a call that waited a second (it would let a
                // timeout name the rank that never came); none for the calls in step.
                assertTrue(c.rendezvousMessages() - before[r] <= 1, "rank " + r + " sent the store messages: " + c);
            }
            if (algorithm.equals("netreduce")) {
                // The early ranks' retransmissions were answered "not ready" by the switch.
                long rnr = 0;
                for (Communicator c : g.comms) {
                    rnr += c.counters().rnrNaksReceived();
                }
                assertTrue(rnr > 0, "no RNR NAK reached the early ranks");
            }
        }
    }
}
