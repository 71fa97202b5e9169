package io.netreduce.collectives.algorithm.netreduce;

import io.netreduce.collectives.algorithm.CallMismatchException;
import io.netreduce.collectives.algorithm.HostException;
import io.netreduce.collectives.algorithm.HostTimeoutException;
import io.netreduce.collectives.algorithm.ProgressGuard;
import io.netreduce.collectives.algorithm.ResultMismatchException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.testkit.inproc.InprocProvider;
import io.netreduce.testkit.inproc.InprocRing;
import io.netreduce.testkit.inproc.InprocSwitch;
import io.netreduce.verbs.Access;
import io.netreduce.verbs.MemoryRegion;
import io.netreduce.wire.ina.InaHeader;
import io.netreduce.wire.control.RingSpec;
import io.netreduce.wire.control.RingStatus;
import io.netreduce.wire.control.SwitchControlClient;
import java.net.InetSocketAddress;
import java.util.List;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The sliding window against the in-process provider and switch stand-in: results equal a
 * reference summed in rank order, bitwise equal on every rank, for sizes around message
 * boundaries and several windows; mismatched results and stalls end in bounded time.
 */
@Timeout(60)
class WindowedAllReduceTest {
    private static final int PAYLOAD = 256;
    private static final int RING_ID = 1;
    private static final AtomicPort PORTS = new AtomicPort();

    private InprocSwitch sw;
    private ExecutorService pool;

    static final class AtomicPort {
        private int next = 30000;

        synchronized int next() {
            return next++;
        }
    }

    @BeforeEach
    void start() throws Exception {
        sw = InprocSwitch.start(new InetSocketAddress("127.0.0.1", PORTS.next()), 1L << 30);
        pool = Executors.newCachedThreadPool();
    }

    @AfterEach
    void stop() throws Exception {
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        sw.close();
    }

    private void createRing(int p) throws Exception {
        RingStatus created = new SwitchControlClient(sw.controlUri(), Duration.ofSeconds(10))
                .createRing(RingSpec.fp32(RING_ID, p, 2, PAYLOAD, 1024), List.of());
        assertEquals(RING_ID, created.spec().ringId(), created.toString());
    }

    private static FloatBuffer randomTensor(Random random, int n) {
        FloatBuffer f = ByteBuffer.allocateDirect(n * 4).order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
        for (int i = 0; i < n; i++) {
            f.put(i, (float) random.nextGaussian());
        }
        return f;
    }

    @ParameterizedTest(name = "P={0} n={1} window={2}")
    @CsvSource({"1,3,1", "2,0,2", "2,1,2", "3,63,2", "3,64,2", "3,65,2", "4,255,1", "5,1000,3", "8,4097,4",
            "8,64,8"})
    void inPlaceSumMatchesRankOrderReferenceOnEveryRank(int p, int n, int window) throws Exception {
        createRing(p);
        long seed = 1000L * p + n;
        Random random = new Random(seed);
        List<ByteBuffer> tensors = new ArrayList<>();
        List<float[]> inputs = new ArrayList<>();
        for (int r = 0; r < p; r++) {
            ByteBuffer b = ByteBuffer.allocateDirect(n * 4 + 8);
            FloatBuffer view = b.order(InaHeader.PAYLOAD_ORDER).position(8).slice()
                    .order(InaHeader.PAYLOAD_ORDER).asFloatBuffer();
            float[] in = new float[n];
            for (int i = 0; i < n; i++) {
                in[i] = (float) random.nextGaussian();
                view.put(i, in[i]);
            }
            tensors.add(b);
            inputs.add(in);
        }
        try (InprocRing ring = new InprocRing(InprocProvider.NAME, p, sw.datapath(), 0)) {
            List<Future<?>> done = new ArrayList<>();
            for (int r = 0; r < p; r++) {
                InprocRing.Rank rank = ring.ranks.get(r);
                ByteBuffer tensor = tensors.get(r);
                RingSettings s = new RingSettings(RING_ID, r, p, InaHeader.DTYPE_FP32, window, PAYLOAD,
                        Duration.ofSeconds(10));
                done.add(pool.submit(() -> {
                    MemoryRegion mr = rank.pd.register(tensor, EnumSet.of(Access.LOCAL_WRITE));
                    try (WindowedAllReduce w = new WindowedAllReduce(rank.pd, rank.toNext, rank.fromPrev, rank.cq, s)) {
                        w.run(mr, 8, mr, 8, n, 7, MessageHooks.NONE, ProgressGuard.NONE);
                        w.run(mr, 8, mr, 8, 0, 7, MessageHooks.NONE, ProgressGuard.NONE);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
        for (int i = 0; i < n; i++) {
            float expected = inputs.get(0)[i];
            for (int r = 1; r < p; r++) {
                expected += inputs.get(r)[i];
            }
            for (int r = 0; r < p; r++) {
                float got = tensors.get(r).order(InaHeader.PAYLOAD_ORDER).getFloat(8 + 4 * i);
                assertEquals(Float.floatToRawIntBits(expected), Float.floatToRawIntBits(got),
                        "seed " + seed + ", rank " + r + ", element " + i);
            }
        }
    }

    @Test
    void resultWithAnotherLengthIsReportedAsMismatch() throws Exception {
        int p = 3;
        createRing(p);
        Random random = new Random(7);
        try (InprocRing ring = new InprocRing(InprocProvider.NAME, p, sw.datapath(), 0)) {
            List<Future<?>> done = new ArrayList<>();
            for (int r = 0; r < p; r++) {
                InprocRing.Rank rank = ring.ranks.get(r);
                int n = r == 1 ? 99 : 100; // same message count, different last payload
                FloatBuffer t = randomTensor(random, n);
                RingSettings s = new RingSettings(RING_ID, r, p, InaHeader.DTYPE_FP32, 2, PAYLOAD,
                        Duration.ofSeconds(5));
                done.add(pool.submit(() -> {
                    ByteBuffer bytes = ByteBuffer.allocateDirect(n * 4);
                    MemoryRegion mr = rank.pd.register(bytes, EnumSet.of(Access.LOCAL_WRITE));
                    bytes.asFloatBuffer().put(t);
                    try (WindowedAllReduce w = new WindowedAllReduce(rank.pd, rank.toNext, rank.fromPrev, rank.cq, s)) {
                        w.run(mr, 0, mr, 0, n, 7, MessageHooks.NONE, ProgressGuard.NONE);
                    }
                    return null;
                }));
            }
            // Rank r receives the result on rank r-1's connection, carrying r-1's header, and
            // the stand-in switch sums only the shortest payload: every rank sees a mismatch.
            for (int r = 0; r < p; r++) {
                ExecutionException e = assertThrows(ExecutionException.class, done.get(r)::get);
                assertInstanceOf(ResultMismatchException.class, e.getCause());
                assertTrue(e.getCause().getMessage().contains("rank " + r), e.getCause().getMessage());
            }
        }
    }

    /** Same length, another call on one rank (its digest differs): every rank fails, none sums. */
    @Test
    void aCallOfAnotherDigestFailsEveryRankAsACallMismatch() throws Exception {
        int p = 3;
        createRing(p);
        Random random = new Random(11);
        try (InprocRing ring = new InprocRing(InprocProvider.NAME, p, sw.datapath(), 0)) {
            List<Future<?>> done = new ArrayList<>();
            for (int r = 0; r < p; r++) {
                InprocRing.Rank rank = ring.ranks.get(r);
                int call = r == 2 ? 8 : 7;
                FloatBuffer t = randomTensor(random, 100);
                RingSettings s = new RingSettings(RING_ID, r, p, InaHeader.DTYPE_FP32, 2, PAYLOAD,
                        Duration.ofSeconds(5));
                done.add(pool.submit(() -> {
                    ByteBuffer bytes = ByteBuffer.allocateDirect(400);
                    MemoryRegion mr = rank.pd.register(bytes, EnumSet.of(Access.LOCAL_WRITE));
                    bytes.asFloatBuffer().put(t);
                    try (WindowedAllReduce w = new WindowedAllReduce(rank.pd, rank.toNext, rank.fromPrev, rank.cq, s)) {
                        w.run(mr, 0, mr, 0, 100, call, MessageHooks.NONE, ProgressGuard.NONE);
                    }
                    return null;
                }));
            }
            for (int r = 0; r < p; r++) {
                ExecutionException e = assertThrows(ExecutionException.class, done.get(r)::get);
                assertInstanceOf(CallMismatchException.class, e.getCause());
                assertTrue(e.getCause().getMessage().contains("called different collectives"), e.getCause().getMessage());
            }
        }
    }

    @Test
    void missingRankEndsInTimeoutNamingTheWait() throws Exception {
        createRing(2);
        try (InprocRing ring = new InprocRing(InprocProvider.NAME, 2, sw.datapath(), 0)) {
            InprocRing.Rank rank = ring.ranks.get(0);
            ByteBuffer bytes = ByteBuffer.allocateDirect(4000);
            MemoryRegion mr = rank.pd.register(bytes, EnumSet.of(Access.LOCAL_WRITE));
            RingSettings s = new RingSettings(RING_ID, 0, 2, InaHeader.DTYPE_FP32, 2, PAYLOAD, Duration.ofMillis(300));
            long t0 = System.nanoTime();
            try (WindowedAllReduce w = new WindowedAllReduce(rank.pd, rank.toNext, rank.fromPrev, rank.cq, s)) {
                HostTimeoutException e = assertThrows(HostTimeoutException.class,
                        () -> w.run(mr, 0, mr, 0, 1000, 7, MessageHooks.NONE, ProgressGuard.NONE));
                assertTrue(e.getMessage().contains("waiting for result 0 of 16"), e.getMessage());
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 250 && ms < 5000, "timed out after " + ms + " ms");
        }
    }

    @Test
    void guardAbortsTheWait() throws Exception {
        createRing(2);
        try (InprocRing ring = new InprocRing(InprocProvider.NAME, 2, sw.datapath(), 0)) {
            InprocRing.Rank rank = ring.ranks.get(0);
            MemoryRegion mr = rank.pd.register(ByteBuffer.allocateDirect(400), EnumSet.of(Access.LOCAL_WRITE));
            RingSettings s = new RingSettings(RING_ID, 0, 2, InaHeader.DTYPE_FP32, 2, PAYLOAD, Duration.ofSeconds(30));
            try (WindowedAllReduce w = new WindowedAllReduce(rank.pd, rank.toNext, rank.fromPrev, rank.cq, s)) {
                IllegalStateException e = assertThrows(IllegalStateException.class,
                        () -> w.run(mr, 0, mr, 0, 100, 7, MessageHooks.NONE, idle -> {
                            if (idle > 50_000_000L) {
                                throw new IllegalStateException("rank 1 failed");
                            }
                        }));
                assertEquals("rank 1 failed", e.getMessage());
            }
        }
    }

    @Test
    void errorCompletionIsReported() throws Exception {
        // No switch at the gateway: the provider fails the send as a transport whose peer never answers.
        try (InprocRing ring = new InprocRing(InprocProvider.NAME, 1, new InetSocketAddress("127.0.0.1", 1), 0)) {
            InprocRing.Rank rank = ring.ranks.get(0);
            MemoryRegion mr = rank.pd.register(ByteBuffer.allocateDirect(400), EnumSet.of(Access.LOCAL_WRITE));
            RingSettings s = new RingSettings(RING_ID, 0, 1, InaHeader.DTYPE_FP32, 1, PAYLOAD, Duration.ofSeconds(30));
            try (WindowedAllReduce w = new WindowedAllReduce(rank.pd, rank.toNext, rank.fromPrev, rank.cq, s)) {
                HostException e = assertThrows(HostException.class,
                        () -> w.run(mr, 0, mr, 0, 100, 7, MessageHooks.NONE, ProgressGuard.NONE));
                assertTrue(e.getMessage().contains("transport retry counter exceeded"), e.getMessage());
            }
        }
    }
}
