package io.netreduce.collectives.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.collectives.Collective;
import io.netreduce.collectives.CollectiveException;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.CommunicatorConfig.Agreement;
import io.netreduce.collectives.ReduceOp;
import io.netreduce.collectives.TestGroup;
import io.netreduce.collectives.algorithm.CollectiveCall;
import io.netreduce.collectives.algorithm.ProgressGuard;
import io.netreduce.collectives.algorithm.ring.RingAlgorithm;
import io.netreduce.collectives.rendezvous.StoreClient;
import io.netreduce.collectives.rendezvous.StoreServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The per-collective agreement in both modes, through real ranks: a mismatch of any part of
 * the call (kind, count, reduction, root), even one of equal lengths, fails the very call
 * that has it on every rank, naming what every rank called; matching calls never report
 * anything; and in the default mode the ring's calls send nothing to the rendezvous store.
 */
@Timeout(60)
@SuppressWarnings("try")
class AgreementTest {
    private static final String MISMATCH = "different tensors or operations";

    private static TestGroup group(String algorithm, Agreement agreement) throws Exception {
        return TestGroup.open(3, TestGroup.template(algorithm).agreement(agreement).timeout(Duration.ofSeconds(10)),
                1L << 30);
    }

    /** Rank 1 broadcasts where ranks 0 and 2 all-reduce (equal lengths), then every rank all-reduces once more. */
    private static List<Object> mismatchThenAnotherCall(TestGroup g) throws Exception {
        return g.onEveryRank((r, c) -> {
            List<String> done = new ArrayList<>();
            try {
                if (r == 1) {
                    c.broadcast(FloatBuffer.allocate(100), 0);
                } else {
                    c.allReduce(FloatBuffer.allocate(100));
                }
                done.add("first");
                c.allReduce(FloatBuffer.allocate(10));
                done.add("second");
                return done;
            } catch (CollectiveException e) {
                return new Object[] {done, e};
            }
        }, 30);
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"ring,IN_BAND", "ring,STRICT", "netreduce,IN_BAND", "netreduce,STRICT"})
    void aMismatchOfEqualLengthsFailsTheCallThatHasItOnEveryRank(String algorithm, Agreement agreement)
            throws Exception {
        try (TestGroup g = group(algorithm, agreement)) {
            List<Object> out = mismatchThenAnotherCall(g);
            for (int r = 0; r < 3; r++) {
                Object[] failed = assertInstanceOf(Object[].class, out.get(r), "rank " + r + " never failed: " + out.get(r));
                List<?> done = (List<?>) failed[0];
                CollectiveException e = (CollectiveException) failed[1];
                assertTrue(e.getMessage().contains(MISMATCH) && e.getMessage().contains("rank 1: broadcast(100, root 0)")
                        && e.getMessage().contains("rank 0: allReduce(100)"), "rank " + r + ": " + e.getMessage());
                assertEquals(List.of(), done, "rank " + r + " returned from a call the others did not make");
            }
        }
    }

    /** Each part of the call on its own: reduction, root, element count (also an empty tensor), kind. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"reduction", "root", "count", "empty", "kind"})
    void everyPartOfTheCallIsCompared(String part) throws Exception {
        try (TestGroup g = group("ring", Agreement.IN_BAND)) {
            List<Object> out = g.onEveryRank((r, c) -> {
                boolean odd = r == 2;
                switch (part) {
                    case "reduction" -> c.allReduce(FloatBuffer.allocate(64), odd ? ReduceOp.MAX : ReduceOp.SUM);
                    case "root" -> c.broadcast(FloatBuffer.allocate(64), odd ? 1 : 0);
                    case "count" -> c.allReduce(FloatBuffer.allocate(odd ? 65 : 64));
                    case "empty" -> c.allReduce(FloatBuffer.allocate(odd ? 0 : 3));
                    default -> {
                        if (odd) {
                            c.barrier();
                        } else {
                            c.allReduce(FloatBuffer.allocate(1));
                        }
                    }
                }
                return "returned";
            }, 30);
            String expected = switch (part) {
                case "reduction" -> "rank 2: allReduce(64, MAX)";
                case "root" -> "rank 2: broadcast(64, root 1)";
                case "count" -> "rank 2: allReduce(65)";
                case "empty" -> "rank 2: allReduce(0)";
                default -> "rank 2: barrier";
            };
            for (int r = 0; r < 3; r++) {
                CollectiveException e = assertInstanceOf(CollectiveException.class, out.get(r), "rank " + r);
                assertTrue(e.getMessage().contains(MISMATCH) && e.getMessage().contains(expected),
                        "rank " + r + ": " + e.getMessage());
            }
        }
    }

    /**
     * The partner schedules (P = 4): a count mismatch between two calls that halving-doubling
     * or recursive doubling take, or one of each, is caught by the partners' headers; one
     * between a call halving-doubling takes and one the pipelined ring takes (their messages
     * go to different queue pairs) by the agreement once the ranks wait. Either way every
     * rank fails the call naming the odd one.
     */
    @ParameterizedTest(name = "small-tensor threshold {0}: {1} elements against {2}")
    @CsvSource({"0,20000,20001", "0,20000,200000", "65536,2000,2001", "65536,2000,20000", "65536,20000,2000"})
    void aMismatchUnderThePartnerSchedulesFailsOnEveryRank(int smallTensorBytes, int count, int oddCount)
            throws Exception {
        CommunicatorConfig.Builder template = TestGroup.template("ring").smallTensorBytes(smallTensorBytes)
                .halvingDoublingBytes(256 * 1024).timeout(Duration.ofSeconds(10));
        try (TestGroup g = TestGroup.open(4, template, 1L << 30)) {
            List<Object> out = g.onEveryRank((r, c) -> {
                c.allReduce(FloatBuffer.allocate(count));
                c.allReduce(FloatBuffer.allocate(r == 3 ? oddCount : count));
                return "returned";
            }, 30);
            for (int r = 0; r < 4; r++) {
                CollectiveException e = assertInstanceOf(CollectiveException.class, out.get(r), "rank " + r);
                assertTrue(e.getMessage().contains(MISMATCH) && e.getMessage().contains("rank 3: allReduce(" + oddCount + ")"),
                        "rank " + r + ": " + e.getMessage());
            }
        }
    }

    /**
     * The rule under the test above, through a real store: a rank still in call #1 when a
     * neighbour reports a mismatch in call #2 finishes #1 while it moves (the reporter has
     * finished it), gives up on it once it stalls, and aborts #2 at once. Before, a rank
     * slowed in #1 aborted it with the neighbour's report instead of failing #2 with every
     * rank's call. A rank that joins the store later is told the report's text.
     */
    @Test
    @Timeout(30)
    void aMismatchReportedInALaterCallLetsARankStillInAnEarlierOneFinishIt() throws Exception {
        Duration timeout = Duration.ofSeconds(10);
        try (StoreServer server = new StoreServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 3);
             StoreClient slow = StoreClient.connect(server.address(), 0, timeout);
             StoreClient ahead = StoreClient.connect(server.address(), 1, timeout)) {
            OperationAgreement agreement = new OperationAgreement(slow, 0, Agreement.IN_BAND, new RingAlgorithm(), timeout);
            ahead.reportMismatch(2, "rank 1: rank 0 sent a message of collective #2 allReduce(65) where rank 1 called allReduce(64)");
            long deadline = System.nanoTime() + timeout.toNanos();
            while (slow.failure() == null && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(2, slow.mismatchOp(), "the report's operation, pushed to every rank");
            assertTrue(slow.failure().startsWith("rank 1: rank 0 sent"), slow.failure());
            CollectiveCall first = new CollectiveCall().set(1, Collective.ALL_REDUCE, ReduceOp.SUM, 64, -1, ProgressGuard.NONE);
            assertDoesNotThrow(() -> agreement.checkProgress(first, 1_000_000L), "call #1 while it moves");
            CollectiveException stalled = assertThrows(CollectiveException.class,
                    () -> agreement.checkProgress(first, 2_000_000_000L), "call #1 stalled for 2 s");
            assertTrue(stalled.getMessage().contains("collective #1") && stalled.getMessage().contains("rank 1: rank 0 sent"),
                    stalled.getMessage());
            CollectiveCall second = new CollectiveCall().set(2, Collective.ALL_REDUCE, ReduceOp.SUM, 65, -1, ProgressGuard.NONE);
            assertThrows(CollectiveException.class, () -> agreement.checkProgress(second, 0), "call #2 at once");
            try (StoreClient late = StoreClient.connect(server.address(), 2, timeout)) {
                while (late.failure() == null && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
                assertEquals(slow.failure(), late.failure(), "what a rank that joins later is told");
            }
        }
    }

    /** With nothing after it, a mismatch in the last call is still that call's error, and close is quiet. */
    @Test
    void aMismatchInTheLastCallIsReportedByItOnEveryRank() throws Exception {
        try (TestGroup g = group("ring", Agreement.IN_BAND)) {
            List<Object> out = g.onEveryRank((r, c) -> {
                if (r == 2) {
                    c.broadcast(FloatBuffer.allocate(64), 0);
                } else {
                    c.allReduce(FloatBuffer.allocate(64));
                }
                return "ok";
            }, 30);
            List<CompletableFuture<Void>> closing = new ArrayList<>();
            for (Communicator c : g.comms) {
                closing.add(CompletableFuture.runAsync(c::close));
            }
            for (int r = 0; r < 3; r++) {
                CollectiveException ce = assertInstanceOf(CollectiveException.class, out.get(r), "rank " + r);
                assertTrue(ce.getMessage().contains(MISMATCH) && ce.getMessage().contains("rank 2: broadcast(64, root 0)"),
                        "rank " + r + ": " + ce.getMessage());
                assertNull(closing.get(r).get(30, TimeUnit.SECONDS), "rank " + r + ": close");
            }
        }
    }

    /**
     * Matching calls of every kind and size, empty tensors included, return the right
     * values and report nothing; and the ring's calls in the default mode send nothing to
     * the rendezvous store, where STRICT sends one announcement per call.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"IN_BAND,0", "STRICT,1"})
    void matchingCallsReturnRightValuesAndTheStoreSeesOnlyWhatTheModeNeeds(Agreement agreement,
                                                                             int messagesPerCall) throws Exception {
        try (TestGroup g = group("ring", agreement)) {
            long[] before = new long[3];
            for (int r = 0; r < 3; r++) {
                before[r] = g.comms.get(r).counters().rendezvousMessages();
            }
            int calls = 50 * 3 + 1;
            g.all((r, c) -> {
                for (int i = 0; i < 50; i++) {
                    int n = i % 7 == 0 ? 0 : 1 + i * 37 % 3000;
                    FloatBuffer t = FloatBuffer.allocate(n);
                    for (int k = 0; k < n; k++) {
                        t.put(k, r + k);
                    }
                    c.allReduce(t);
                    for (int k = 0; k < n; k++) {
                        assertEquals(3f * k + 3, t.get(k), "rank " + r + " element " + k + " of " + n);
                    }
                    FloatBuffer b = FloatBuffer.wrap(new float[] {r, r + 1, r + 2});
                    c.broadcast(b, i % 3);
                    assertArrayEquals(new float[] {i % 3, i % 3 + 1, i % 3 + 2}, b.array(), "rank " + r);
                    c.allReduce(FloatBuffer.wrap(new float[] {r}), ReduceOp.MAX);
                }
                c.barrier();
                return null;
            }, 30);
            for (int r = 0; r < 3; r++) {
                long sent = g.comms.get(r).counters().rendezvousMessages() - before[r];
                assertEquals((long) messagesPerCall * calls, sent, "rank " + r + ": messages to the store for "
                        + calls + " calls in " + agreement + " mode");
            }
        }
    }

    @Test
    void agreementComesFromTheEnvironmentWithInBandAsDefault() {
        assertEquals(Agreement.IN_BAND, CommunicatorConfig.builder().build().agreement());
        assertEquals(Agreement.STRICT, CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_AGREEMENT", "strict"))
                .agreement());
        for (String name : List.of("in-band", " IN_BAND ", "async", "off")) {
            assertEquals(Agreement.IN_BAND, CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_AGREEMENT", name))
                    .agreement(), name);
        }
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_AGREEMENT", "never")));
        assertTrue(bad.getMessage().contains("NETREDUCE_AGREEMENT") && bad.getMessage().contains("never"),
                bad.getMessage());
    }
}
