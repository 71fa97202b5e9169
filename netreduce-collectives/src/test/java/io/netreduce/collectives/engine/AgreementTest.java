package io.netreduce.collectives.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.collectives.CollectiveException;
import io.netreduce.collectives.Communicator;
import io.netreduce.collectives.CommunicatorConfig;
import io.netreduce.collectives.CommunicatorConfig.Agreement;
import io.netreduce.collectives.TestGroup;
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
 * The per-collective agreement check in both modes, through real ranks: a mismatch the
 * data path cannot see (same length, another operation) is reported on every rank by the
 * call that has it (STRICT, and netreduce, whose ranks wait for each other before sending)
 * or at the latest by the next call, or by close() when there is no next call (ASYNC).
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
    @CsvSource({"ring,ASYNC", "ring,STRICT", "netreduce,ASYNC", "netreduce,STRICT"})
    void anOperationMismatchIsReportedOnEveryRankByTheNextCallAtTheLatest(String algorithm, Agreement agreement)
            throws Exception {
        try (TestGroup g = group(algorithm, agreement)) {
            boolean sameCall = agreement == Agreement.STRICT || "netreduce".equals(g.comms.get(0).algorithm());
            List<Object> out = mismatchThenAnotherCall(g);
            for (int r = 0; r < 3; r++) {
                Object[] failed = assertInstanceOf(Object[].class, out.get(r), "rank " + r + " never failed: " + out.get(r));
                List<?> done = (List<?>) failed[0];
                CollectiveException e = (CollectiveException) failed[1];
                assertTrue(e.getMessage().contains(MISMATCH) && e.getMessage().contains("rank 1: broadcast(100, root 0)")
                        && e.getMessage().contains("rank 0: allReduce(100)"), "rank " + r + ": " + e.getMessage());
                assertTrue(done.size() <= (sameCall ? 0 : 1), "rank " + r + " completed " + done + " before the error");
            }
        }
    }

    /** With no next call, a mismatch whose verdict came after the call returned is reported by close(). */
    @Test
    void aMismatchInTheLastCallIsReportedByItOrByCloseOnEveryRank() throws Exception {
        try (TestGroup g = group("ring", Agreement.ASYNC)) {
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
                int rank = r;
                CollectiveException ce;
                if ("ok".equals(out.get(r))) {
                    Exception e = assertThrows(Exception.class, () -> closing.get(rank).get(30, TimeUnit.SECONDS),
                            "rank " + r + ": neither the call nor close reported the mismatch");
                    ce = assertInstanceOf(CollectiveException.class, e.getCause(), "rank " + r);
                } else {
                    ce = assertInstanceOf(CollectiveException.class, out.get(r), "rank " + r);
                    closing.get(r).get(30, TimeUnit.SECONDS); // already reported: close is quiet
                }
                assertTrue(ce.getMessage().contains(MISMATCH) && ce.getMessage().contains("rank 2: broadcast(64, root 0)"),
                        "rank " + r + ": " + ce.getMessage());
            }
        }
    }

    @Test
    void matchingCallsInAsyncModeNeverReportAnything() throws Exception {
        try (TestGroup g = group("ring", Agreement.ASYNC)) {
            g.all((r, c) -> {
                for (int i = 0; i < 50; i++) {
                    c.allReduce(FloatBuffer.allocate(1 + i % 5));
                    c.broadcast(FloatBuffer.allocate(3), i % 3);
                }
                c.barrier();
                return null;
            }, 30);
        }
    }

    /**
     * OFF trusts the data path alone, as NCCL does: a length mismatch is still caught (ring
     * messages carry the tensor length) and reported on every rank, never a hang; a mismatch
     * of equal lengths is not checked, so both calls return (the documented price).
     */
    @Test
    void withAgreementOffTheDataPathStillCatchesALengthMismatchOnEveryRank() throws Exception {
        try (TestGroup g = group("ring", Agreement.OFF)) {
            List<Object> unchecked = g.onEveryRank((r, c) -> {
                if (r == 1) {
                    c.broadcast(FloatBuffer.allocate(100), 0);
                } else {
                    c.allReduce(FloatBuffer.allocate(100));
                }
                return "returned";
            }, 30);
            for (int r = 0; r < 3; r++) {
                assertEquals("returned", unchecked.get(r), "rank " + r + ": equal lengths are not compared when OFF");
            }
            List<Object> out = g.onEveryRank((r, c) -> {
                c.allReduce(FloatBuffer.allocate(r == 1 ? 5001 : 5000));
                return "returned";
            }, 30);
            for (int r = 0; r < 3; r++) {
                CollectiveException e = assertInstanceOf(CollectiveException.class, out.get(r),
                        "rank " + r + " returned from a collective with mismatched lengths: " + out.get(r));
                assertTrue(e.getMessage().contains("5001") || e.getMessage().contains("aborted"),
                        "rank " + r + ": " + e.getMessage());
            }
        }
    }

    @Test
    void agreementComesFromTheEnvironmentWithAsyncAsDefault() {
        assertEquals(Agreement.ASYNC, CommunicatorConfig.builder().build().agreement());
        assertEquals(Agreement.STRICT, CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_AGREEMENT", "strict"))
                .agreement());
        assertEquals(Agreement.ASYNC, CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_AGREEMENT", " Async "))
                .agreement());
        assertEquals(Agreement.OFF, CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_AGREEMENT", "off"))
                .agreement());
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> CommunicatorConfig.fromEnvironment(Map.of("NETREDUCE_AGREEMENT", "never")));
        assertTrue(bad.getMessage().contains("NETREDUCE_AGREEMENT") && bad.getMessage().contains("never"),
                bad.getMessage());
    }
}
