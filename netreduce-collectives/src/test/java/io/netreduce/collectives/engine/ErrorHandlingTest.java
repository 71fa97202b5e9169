package io.netreduce.collectives.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.collectives.CollectiveException;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.TestGroup;
import io.netreduce.collectives.Tensors;
import io.netreduce.verbs.Capability;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every error case ends in bounded time with an exception that says what happened, on every rank. */
@Timeout(60)
@SuppressWarnings("try")
class ErrorHandlingTest {

    private static long millisSince(long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netreduce", "ring"})
    void differentLengthsFailOnEveryRankNamingTheLengths(String algorithm) throws Exception {
        int p = 4;
        try (TestGroup g = TestGroup.open(p, TestGroup.template(algorithm).timeout(Duration.ofSeconds(10)), 1L << 30)) {
            long t0 = System.nanoTime();
            List<Object> out = g.onEveryRank((r, c) -> {
                int n = r == 2 ? 5000 : 5001;
                c.allReduce(Tensors.make(Tensors.Kind.DIRECT, Tensors.random(new Random(r), n)));
                return null;
            }, 30);
            for (int r = 0; r < p; r++) {
                CollectiveException e = assertInstanceOf(CollectiveException.class, out.get(r), "rank " + r);
                assertTrue(e.getMessage().contains("different tensors") && e.getMessage().contains("rank 2: allReduce(5000)")
                        && e.getMessage().contains("rank 0: allReduce(5001)"), e.getMessage());
            }
            assertTrue(millisSince(t0) < 10_000, "took " + millisSince(t0) + " ms");
            // The communicator is broken afterwards: later operations fail at once with the cause.
            CollectiveException again = assertThrows(CollectiveException.class,
                    () -> g.comms.get(0).allReduce(FloatBuffer.allocate(3)));
            assertTrue(again.getMessage().contains("broken by an earlier failure"), again.getMessage());
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"netreduce", "ring"})
    void aRankThatDiesIsNamedOnEveryOtherRank(String algorithm) throws Exception {
        int p = 4;
        int dead = 2;
        try (TestGroup g = TestGroup.open(p, TestGroup.template(algorithm).timeout(Duration.ofSeconds(10)), 1L << 30)) {
            long t0 = System.nanoTime();
            List<Object> out = g.onEveryRank((r, c) -> {
                if (r == dead) {
                    Thread.sleep(200); // let the others start, then vanish without a goodbye
                    ((GroupCommunicator) c).crash();
                    return null;
                }
                c.allReduce(Tensors.make(Tensors.Kind.DIRECT, Tensors.random(new Random(r), 200_000)));
                return null;
            }, 30);
            for (int r = 0; r < p; r++) {
                if (r != dead) {
                    CollectiveException e = assertInstanceOf(CollectiveException.class, out.get(r), "rank " + r);
                    assertTrue(e.getMessage().contains("rank " + dead + " left the group"), e.getMessage());
                }
            }
            assertTrue(millisSince(t0) < 10_000, "took " + millisSince(t0) + " ms, timeout is 10 s");
        }
    }

    @Test
    void aRankThatNeverJoinsTheOperationEndsInTheConfiguredTimeoutNamingIt() throws Exception {
        int p = 3;
        try (TestGroup g = TestGroup.open(p, TestGroup.template("ring").timeout(Duration.ofSeconds(2)), 1L << 30)) {
            long t0 = System.nanoTime();
            List<Object> out = g.onEveryRank((r, c) -> {
                if (r != 1) {
                    c.allReduce(Tensors.make(Tensors.Kind.HEAP, Tensors.random(new Random(r), 10_000)));
                }
                return null;
            }, 30);
            long ms = millisSince(t0);
            for (int r : new int[] {0, 2}) {
                CollectiveException e = assertInstanceOf(CollectiveException.class, out.get(r), "rank " + r);
                assertTrue(e.getMessage().contains("[1]"), e.getMessage());
            }
            assertTrue(ms >= 1_500 && ms < 8_000, "took " + ms + " ms with a 2 s timeout");
        }
    }

    @Test
    void badArgumentsFailImmediately() throws Exception {
        try (TestGroup g = TestGroup.open(2, "ring")) {
            Communicator c = g.comms.get(0);
            assertThrows(NullPointerException.class, () -> c.allReduce(null));
            assertThrows(NullPointerException.class, () -> c.allReduceAsync(FloatBuffer.allocate(1), null));
            IllegalArgumentException ro = assertThrows(IllegalArgumentException.class,
                    () -> c.allReduce(FloatBuffer.allocate(4).asReadOnlyBuffer()));
            assertTrue(ro.getMessage().contains("read-only"), ro.getMessage());
            assertThrows(IllegalArgumentException.class, () -> c.broadcast(FloatBuffer.allocate(4), 2));
            assertThrows(IllegalArgumentException.class,
                    () -> c.allGather(FloatBuffer.allocate(3), FloatBuffer.allocate(5)));
            // Nothing was queued: the group still works.
            g.all((r, comm) -> {
                comm.allReduce(ByteBuffer.allocateDirect(16).asFloatBuffer());
                return null;
            }, 20);
        }
        TestGroup g = TestGroup.open(2, "ring");
        g.close();
        IllegalStateException closed = assertThrows(IllegalStateException.class,
                () -> g.comms.get(1).allReduce(FloatBuffer.allocate(1)));
        assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
        assertThrows(IllegalStateException.class, () -> g.comms.get(0).barrier());
    }

    @Test
    void closingFreesTheRingOnTheSwitchForTheNextGroup() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(TestGroup.capabilities().has(Capability.PATH_MTU_PACKETS)
                && TestGroup.capabilities().has(Capability.ROCE_V2_FRAMES), "needs a transport that goes through the "
                + "real switch, not " + TestGroup.capabilities());
        try (io.netreduce.collectives.RealSwitch sw = io.netreduce.collectives.RealSwitch.start(1L << 30)) {
            for (int round = 0; round < 2; round++) {
                // Same addresses, ports and queue-pair numbers both times: a ring left behind
                // would make the switch refuse the second one (and the group fail to open).
                try (TestGroup g = TestGroup.open(2, TestGroup.template("netreduce").switchAddress(sw.data())
                        .switchControl(sw.control()), 1L << 30)) {
                    assertEquals("netreduce", g.comms.get(0).algorithm(), "round " + round);
                }
            }
        }
    }
}
