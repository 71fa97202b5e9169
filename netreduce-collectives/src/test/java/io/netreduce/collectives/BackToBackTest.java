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
