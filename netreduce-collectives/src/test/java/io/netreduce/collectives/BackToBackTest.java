package io.netreduce.collectives;

import io.netreduce.wire.ina.InaHeader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netreduce.collectives.algorithm.MessagePlan;
import io.netreduce.verbs.Capability;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.tcp.TcpVerbsProvider;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Many small collectives back to back, with no pause between them, sizes changing from
 * call to call (including tensors smaller than the ring, whose chunks are empty) and
 * barriers in between: ranks that finish a call early start the next one while their
 * neighbours are still in the previous one, which is what the ring's look-ahead receives
 * (no message may wait for the RNR timer) and the in-band agreement check must cope with. Inputs are small integers, so every sum
 * is exact and checked on every rank after every call. Over tcp the ring runs with the
 * provider's polled progress (no thread per queue pair) unless the process asks for
 * threads ({@code tcp.progress}); both are run and told apart by the threads that exist.
 */
@Timeout(120)
@SuppressWarnings("try")
class BackToBackTest {
    private static final int[] SIZES = {1, 2, 3, 7, 1024, TestGroup.MESSAGE_BYTES / 4 + 1, 3 * TestGroup.MESSAGE_BYTES};
    private static final int CALLS = 300;

    /**
     * Element counts for the ring's own path (no small-tensor path): at P = 2 and 3, steps of
     * one message (after which an all-reduce keeps the fewest receives posted ahead), of
     * several, and of none (a tensor smaller than the ring).
     */
    private static final int[] RING_SIZES = {1, 2, 700, 2 * (TestGroup.MESSAGE_BYTES / 4),
            2 * (TestGroup.MESSAGE_BYTES / 4) + 2, 5 * (TestGroup.MESSAGE_BYTES / 4)};

    /**
     * The ring's all-reduce (in place and out of place), reduce-scatter and all-gather back to
     * back in a random mix of kinds and sizes, every one on the ring's pipelined path, and
     * every result exact. At P = 2, whichever call follows which, a neighbour that runs ahead
     * finds a receive posted for everything it sends before this rank joins: no RNR NAK.
     */
    @ParameterizedTest(name = "ring over {1}, P={0}")
    @CsvSource({"2,tcp", "3,tcp", "2,soft"})
    void backToBackRingCallsOfEveryKindAreExact(int p, String transport) throws Exception {
        long seed = 20_261_207L + p;
        try (TestGroup g = TestGroup.open(p, TestGroup.template("ring").transport(transport).smallTensorBytes(0),
                1L << 30)) {
            g.all((r, c) -> {
                Random rnd = new Random(seed);
                int most = p * RING_SIZES[RING_SIZES.length - 1];
                FloatBuffer a = ByteBuffer.allocateDirect(4 * most).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
                FloatBuffer b = ByteBuffer.allocateDirect(4 * most).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
                for (int call = 0; call < CALLS; call++) {
                    int kind = rnd.nextInt(5);
                    int n = RING_SIZES[rnd.nextInt(RING_SIZES.length)];
                    String what = "rank " + r + ", call " + call + " (kind " + kind + ", " + n + " elements, seed "
                            + seed + ")";
                    if (kind == 4) {
                        c.barrier();
                        continue;
                    }
                    // Input of rank q at element i: (q + 1) * (i % 13) + call % 7; their sums are exact.
                    int in = kind == 2 ? p * n : n;
                    a.clear().limit(in);
                    for (int i = 0; i < in; i++) {
                        a.put(i, (float) ((r + 1) * (i % 13) + call % 7));
                    }
                    if (kind == 0) {
                        c.allReduce(a);
                        checkSums(a, 0, n, p, call, what);
                    } else if (kind == 1) {
                        b.clear().limit(n);
                        c.allReduce(a, b);
                        checkSums(b, 0, n, p, call, what);
                    } else if (kind == 2) {
                        b.clear().limit(n);
                        c.reduceScatter(a, b);
                        checkSums(b, r * n, n, p, call, what);
                    } else {
                        b.clear().limit(p * n);
                        c.allGather(a, b);
                        for (int i = 0; i < p * n; i++) {
                            float expected = (float) ((i / n + 1) * (i % n % 13) + call % 7);
                            assertEquals(expected, b.get(i), what + ", gathered element " + i);
                        }
                    }
                }
                return null;
            }, 100);
            for (int r = 0; r < p; r++) {
                long rnr = g.comms.get(r).counters().rnrNaksReceived();
                System.out.println("rank " + r + " of " + p + " over " + transport + ": " + rnr + " RNR NAKs (seed "
                        + seed + ")");
                if (p == 2) {
                    assertEquals(0, rnr, "rank " + r + " RNR NAKs (seed " + seed + "): " + g.comms.get(r).counters());
                }
            }
        }
    }

    /** Element j of {@code t} holds the sum over P ranks of element {@code first + j} of their inputs. */
    private static void checkSums(FloatBuffer t, int first, int n, int p, int call, String what) {
        for (int j = 0; j < n; j++) {
            int i = first + j;
            float expected = (float) ((p * (p + 1) / 2) * (i % 13) + p * (call % 7));
            assertEquals(expected, t.get(j), what + ", element " + i);
        }
    }

    @ParameterizedTest(name = "{1} over {2} {3}, P={0}")
    @CsvSource({"2,ring,tcp,", "3,ring,tcp,", "4,ring,tcp,", "2,ring,tcp,threads", "2,ring,soft,", "4,ring,soft,",
            "2,netreduce,soft,", "3,netreduce,soft,"})
    void backToBackCallsOfChangingSizesAreExactOnEveryRank(int p, String algorithm, String transport,
                                                           String tcpProgress) throws Exception {
        long seed = 20_241_129L + p;
        if (tcpProgress != null) {
            System.setProperty(TcpVerbsProvider.PROGRESS, tcpProgress);
        }
        try (TestGroup g = TestGroup.open(p, TestGroup.template(algorithm).transport(transport), 1L << 30)) {
            if (Verbs.provider(transport).capabilities().has(Capability.PROGRESS_ON_POLLING_THREAD)) {
                // Two queue pairs per rank; with threads each has a reader and a writer.
                long perQpThreads = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("tcp-verbs-qp")).count();
                assertEquals("threads".equals(tcpProgress) ? 4L * p : 0L, perQpThreads,
                        "tcp queue-pair threads with progress " + (tcpProgress == null ? "poll (the ring's choice)"
                                : tcpProgress));
            }
            List<Object> out = g.onEveryRank((r, c) -> {
                Random sizes = new Random(seed);
                FloatBuffer t = ByteBuffer.allocateDirect(4 * 3 * TestGroup.MESSAGE_BYTES)
                        .order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
                for (int call = 0; call < CALLS; call++) {
                    int kind = sizes.nextInt(8);
                    int n = SIZES[sizes.nextInt(SIZES.length)];
                    if (kind == 0) {
                        c.barrier();
                        continue;
                    }
                    t.clear().limit(n);
                    for (int i = 0; i < n; i++) {
                        t.put(i, (float) ((r + 1) * (i % 13) + call % 7));
                    }
                    c.allReduce(t);
                    for (int i = 0; i < n; i++) {
                        float expected = (float) ((p * (p + 1) / 2) * (i % 13) + p * (call % 7));
                        if (t.get(i) != expected) {
                            throw new AssertionError("rank " + r + ", call " + call + " (" + n + " elements), element "
                                    + i + ": " + t.get(i) + " != " + expected + " (seed " + seed + ")");
                        }
                    }
                }
                return null;
            }, 100);
            for (int r = 0; r < p; r++) {
                assertNull(out.get(r), "rank " + r + " (seed " + seed + ")");
            }
            if (algorithm.equals("ring")) {
                // Every call here takes the small-tensor path, whose look-ahead receives cover
                // all a neighbour can send ahead: none of them may wait for the RNR timer.
                for (int r = 0; r < p; r++) {
                    assertEquals(0, g.comms.get(r).counters().rnrNaksReceived(), "rank " + r + " RNR NAKs: "
                            + g.comms.get(r).counters());
                }
            }
        } finally {
            if (tcpProgress != null) {
                System.clearProperty(TcpVerbsProvider.PROGRESS);
            }
        }
    }
}
