package io.netreduce.collectives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.FloatBuffer;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What Communicator.counters() reports after real collectives: the count of each kind that
 * completed, the wire bytes the rank's transport moved (at least the tensor bytes each
 * algorithm must send), time spent waiting, and the failures, in both renderings.
 */
@Timeout(60)
@SuppressWarnings("try")
class CountersTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netreduce", "ring"})
    void countersFollowWhatEachRankDid(String algorithm) throws Exception {
        int p = 3;
        int n = 20_000;
        long seed = 808;
        try (TestGroup g = TestGroup.open(p, algorithm)) {
            Random random = new Random(seed);
            FloatBuffer[] t = new FloatBuffer[p];
            for (int r = 0; r < p; r++) {
                t[r] = Tensors.make(Tensors.Kind.DIRECT, Tensors.random(random, n));
            }
            CommunicatorCounters[] before = new CommunicatorCounters[p];
            for (int r = 0; r < p; r++) {
                before[r] = g.comms.get(r).counters();
            }
            g.all((r, c) -> {
                c.allReduce(t[r]);
                c.allReduce(t[r]);
                c.broadcast(t[r], 1);
                c.barrier();
                return null;
            }, 30);
            for (int r = 0; r < p; r++) {
                CommunicatorCounters after = g.comms.get(r).counters();
                String ctx = "seed " + seed + ", " + algorithm + " rank " + r + ": " + after;
                assertEquals(2, after.collectives(Collective.ALL_REDUCE) - before[r].collectives(Collective.ALL_REDUCE),
                        ctx);
                assertEquals(1, after.collectives(Collective.BROADCAST) - before[r].collectives(Collective.BROADCAST),
                        ctx);
                assertEquals(1, after.collectives(Collective.BARRIER) - before[r].collectives(Collective.BARRIER), ctx);
                assertEquals(0, after.collectives(Collective.ALL_GATHER), ctx);
                // Three tensor-sized collectives: netreduce sends each tensor once, the ring 2(P-1)/P of it.
                double share = algorithm.equals(CommunicatorConfig.NETREDUCE) ? 1.0 : 2.0 * (p - 1) / p;
                long tensorBytes = 4L * n;
                assertTrue(after.bytesSent() - before[r].bytesSent() >= 3 * share * tensorBytes, ctx);
                assertTrue(after.bytesReceived() - before[r].bytesReceived() >= 3 * share * tensorBytes, ctx);
                assertTrue(after.packetsSent() > before[r].packetsSent(), ctx);
                assertTrue(!after.waited().isNegative(), ctx);
                assertEquals(0, after.errors(), ctx);
                String prom = after.toPrometheus();
                assertTrue(prom.contains("netreduce_collectives_total{rank=\"" + r + "\",kind=\"allReduce\"} "
                        + after.collectives(Collective.ALL_REDUCE)), prom);
                assertTrue(prom.contains("netreduce_wire_bytes_sent_total{rank=\"" + r + "\"} " + after.bytesSent()),
                        prom);
                assertTrue(after.toString().startsWith("rank " + r + " (" + algorithm + " over "), after.toString());
            }
            // A failed collective is counted where it failed, and on every rank the group told.
            List<Object> out = g.onEveryRank((r, c) -> {
                c.allReduce(FloatBuffer.allocate(r == 0 ? 10 : 11));
                return null;
            }, 30);
            for (int r = 0; r < p; r++) {
                assertInstanceOf(CollectiveException.class, out.get(r), "rank " + r);
                assertEquals(1, g.comms.get(r).counters().errors(), "rank " + r);
            }
        }
    }
}
