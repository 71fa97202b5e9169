package io.netreduce.collectives.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.collectives.CollectiveException;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.RealSwitch;
import io.netreduce.collectives.TestGroup;
import io.netreduce.collectives.Tensors;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which algorithm runs is decided by what the transport can do and what the switch says:
 * an algorithm that cannot run fails at open on every rank with the reason, and runs the
 * configured fallback instead only where the user allowed one, which then says so.
 */
@Timeout(90)
class AlgorithmChoiceTest {
    private static final int P = 2;

    private static CommunicatorConfig.Builder netreduceOver(String transport) {
        return TestGroup.template(CommunicatorConfig.NETREDUCE).transport(transport).timeout(Duration.ofSeconds(10));
    }

    /** Every rank failed with a CollectiveException whose message has all of {@code words}; returns one. */
    private static String everyRankFailed(List<Object> opened, String... words) throws Exception {
        try {
            String message = null;
            for (int r = 0; r < opened.size(); r++) {
                CollectiveException e = assertInstanceOf(CollectiveException.class, opened.get(r), "rank " + r);
                for (String w : words) {
                    assertTrue(e.getMessage().contains(w), "rank " + r + " should name '" + w + "': " + e.getMessage());
                }
                assertTrue(e.getMessage().startsWith("rank " + r + ": "), e.getMessage());
                message = e.getMessage();
            }
            return message;
        } finally {
            TestGroup.closeAll(opened);
        }
    }

    private static void sumsExactly(List<Object> opened, String algorithmPrefix) throws Exception {
        try {
            Communicator[] c = new Communicator[opened.size()];
            for (int r = 0; r < c.length; r++) {
                c[r] = assertInstanceOf(Communicator.class, opened.get(r), "rank " + r);
                assertTrue(c[r].algorithm().startsWith(algorithmPrefix), c[r].algorithm());
            }
            Random random = new Random(41);
            float[][] inputs = {Tensors.random(random, 3000), Tensors.random(random, 3000)};
            FloatBuffer[] t = {Tensors.make(Tensors.Kind.DIRECT, inputs[0]), Tensors.make(Tensors.Kind.DIRECT, inputs[1])};
            Thread other = new Thread(() -> c[1].allReduce(t[1]));
            other.start();
            c[0].allReduce(t[0]);
            other.join(20_000);
            float[] expected = Tensors.expected(CommunicatorConfig.RING, inputs);
            assertNull(Tensors.diff(t[0], expected));
            assertNull(Tensors.diff(t[1], expected));
        } finally {
            TestGroup.closeAll(opened);
        }
    }

    @Test
    void netreduceOverTcpFailsAtOpenOnEveryRankNamingTheTransportAndWhatToUse() throws Exception {
        try (RealSwitch sw = RealSwitch.start(1L << 30)) {
            long t0 = System.nanoTime();
            String m = everyRankFailed(TestGroup.openEach(P, netreduceOver("tcp").switchAddress(sw.data())
                    .switchControl(sw.control()), 30), "'tcp'", "RoCEv2", "'soft'", "ring");
            assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "took " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            assertTrue(!m.contains("\n"), "one line: " + m);
        }
    }

    @Test
    void netreduceOverTcpRunsTheRingWhereTheUserAllowsTheFallback() throws Exception {
        try (RealSwitch sw = RealSwitch.start(1L << 30)) {
            sumsExactly(TestGroup.openEach(P, netreduceOver("tcp").fallback(CommunicatorConfig.RING)
                    .switchAddress(sw.data()).switchControl(sw.control()), 30),
                    "ring (fallback from netreduce: algorithm 'netreduce' cannot run over transport 'tcp'");
        }
    }

    @Test
    void aSwitchThatRefusesTheRingFailsEveryRankWithItsReason() throws Exception {
        // A 1 KiB aggregator budget cannot hold 2N messages x P ranks: the switch answers 409.
        try (RealSwitch sw = RealSwitch.start(1024)) {
            everyRankFailed(TestGroup.openEach(P, netreduceOver("soft").switchAddress(sw.data())
                    .switchControl(sw.control()), 30), "netreduce", "HTTP 409", "aggregator memory",
                    "NETREDUCE_FALLBACK=ring");
        }
    }

    @Test
    void aSwitchThatRefusesTheRingLeavesTheRingWhereAllowed() throws Exception {
        try (RealSwitch sw = RealSwitch.start(1024)) {
            sumsExactly(TestGroup.openEach(P, netreduceOver("soft").fallback("ring").switchAddress(sw.data())
                    .switchControl(sw.control()), 30), "ring (fallback from netreduce: switch at ");
        }
    }

    @Test
    void withoutASwitchNetreduceSaysHowToConfigureOne() throws Exception {
        everyRankFailed(TestGroup.openEach(P, netreduceOver("soft").switchAddress(null), 30), "no switch is configured",
                "NETREDUCE_SWITCH");
    }

    @Test
    void aWorldOfOneNeedsNoTransportThatCanCarryTheAlgorithm() throws Exception {
        List<Object> one = TestGroup.openEach(1, netreduceOver("tcp"), 10);
        try {
            Communicator c = assertInstanceOf(Communicator.class, one.get(0));
            assertEquals(CommunicatorConfig.NETREDUCE, c.algorithm());
            FloatBuffer t = FloatBuffer.wrap(new float[] {1, 2});
            c.allReduce(t);
            assertEquals(2f, t.get(1));
        } finally {
            TestGroup.closeAll(one);
        }
    }
}
