package io.netreduce.collectives;

import io.netreduce.wire.ina.InaHeader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netreduce.netswitch.SwitchServer;
import io.netreduce.netswitch.engine.DropReason;
import io.netreduce.netswitch.engine.SwitchCounters;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.verbs.soft.SoftProvider;
import java.net.InetSocketAddress;
import java.net.URI;
import io.netreduce.collectives.algorithm.MessagePlan;
import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.util.List;
import java.time.Duration;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Liveness of the netreduce all-reduce under heavy random loss: P = 4 ranks on the soft RoCEv2
 * provider through a real in-process switch, 5 % seeded loss on every device's egress (data
 * packets to the switch and ACKs/NAKs back), a short 200 ms ACK timeout, many all-reduces of
 * varied sizes, each result checked exactly (integer-valued inputs). The ranks run on their own
 * and each closes its communicator as soon as its last all-reduce returns, as processes do; the
 * group is opened again every few all-reduces so that many runs end in a close. Through
 * the switch a sender's ACK waits for every rank's packet, and a peer may still be recovering the
 * tail of the last all-reduce when a rank is done, so this is where a teardown that does not wait
 * for the peers, or a switch that answers a retransmission wrongly, shows up as RETRY_EXC_ERR.
 *
 * <p>The default run is short enough for CI. The long one (50 all-reduces of 4 KiB .. 2 MiB) runs
 * with {@code -Dnetreduce.test.stress=true}; {@code -Dnetreduce.test.stress.seed=S} picks the
 * seed (default: random, printed), {@code -Dnetreduce.test.stress.ackTimeoutMs=T} the ACK timeout.
 */
@Timeout(600)
@SuppressWarnings("try")
class LossStressTest {
    private static final boolean LONG = Boolean.getBoolean("netreduce.test.stress");
    /** All-reduces per group: the group is opened again after each round, so every round ends in a close. */
    private static final int ROUND = LONG ? 5 : 2;

    @Test
    void allReducesThroughTheSwitchStayLiveAtFivePercentLoss() throws Exception {
        assumeTrue(new SoftProvider().unavailableReason() == null, "the soft verbs provider cannot run here");
        long seed = Long.getLong("netreduce.test.stress.seed", LONG ? new Random().nextLong() : 20260611L);
        int iterations = Integer.getInteger("netreduce.test.stress.iterations", LONG ? 50 : 10);
        int maxBytes = LONG ? 2 << 20 : 256 << 10;
        double loss = Double.parseDouble(System.getProperty("netreduce.test.stress.loss", "0.05"));
        Duration ackTimeout = Duration.ofMillis(Long.getLong("netreduce.test.stress.ackTimeoutMs", 200));
        int p = 4;
        String where = String.format(Locale.ROOT, "seed %d, loss %.3f, ACK timeout %d ms", seed, loss,
                ackTimeout.toMillis());
        System.out.println("LossStressTest: " + where + ", " + iterations + " all-reduces up to " + maxBytes + " B");

        try (SwitchServer sw = SwitchServer.start(new InetSocketAddress("127.0.0.100", 0),
                new InetSocketAddress("127.0.0.1", 0), 1L << 30)) {
            // The library's defaults for MTU (4096), message length (16 KiB) and window (4).
            CommunicatorConfig.Builder b = CommunicatorConfig.builder().algorithm(CommunicatorConfig.NETREDUCE)
                    .transport(SoftProvider.NAME).loopbackPrefix(TestGroup.loopbackPrefix())
                    .ackTimeout(ackTimeout).timeout(Duration.ofSeconds(60))
                    .switchAddress(sw.dataAddress())
                    .switchControl(URI.create("http://127.0.0.1:" + sw.controlAddress().getPort()));
            Random random = new Random(seed);
            int done = 0;
            for (int round = 0; done < iterations; round++) {
                int count = Math.min(iterations - done, ROUND);
                int[] sizes = new int[count];
                for (int i = 0; i < count; i++) {
                    // 4 KiB .. maxBytes, log-uniform, and now and then an element count that is
                    // not a whole number of messages.
                    int bytes = (int) Math.round(4096 * Math.pow((double) maxBytes / 4096, random.nextDouble()));
                    sizes[i] = Math.max(1, bytes / 4 - (random.nextInt(3) == 0 ? random.nextInt(1000) : 0));
                }
                int offset = random.nextInt(1000);
                String at = where + ", round " + round;
                // Each rank runs its all-reduces and closes its communicator on its own, as a
                // process would: a rank that is done must not pull the ring from under a peer
                // still recovering the tail of the last one.
                try (TestGroup g = TestGroup.open(p, b.faults(FaultPlan.loss(seed + round, loss)),
                        1L << 30)) {
                    for (Communicator c : g.comms) {
                        assertEquals(CommunicatorConfig.NETREDUCE, c.algorithm(), at + ": through the switch");
                    }
                    List<Object> outcome = g.onEveryRank((r, c) -> {
                        try (c) {
                            for (int i = 0; i < count; i++) {
                                FloatBuffer t = ByteBuffer.allocateDirect(sizes[i] * 4).order(InaHeader.PAYLOAD_ORDER)
                                        .asFloatBuffer();
                                for (int k = 0; k < sizes[i]; k++) {
                                    t.put(k, value(r, i, k, offset));
                                }
                                c.allReduce(t);
                                for (int k = 0; k < sizes[i]; k++) {
                                    float want = 0;
                                    for (int q = 0; q < p; q++) {
                                        want += value(q, i, k, offset);
                                    }
                                    if (t.get(k) != want) {
                                        return "all-reduce " + i + " of " + sizes[i] + " elements: element " + k
                                                + " is " + t.get(k) + ", expected " + want;
                                    }
                                }
                            }
                        }
                        return null;
                    }, 300);
                    for (int r = 0; r < p; r++) {
                        Object o = outcome.get(r);
                        if (o instanceof Throwable e) {
                            throw new AssertionError(at + ": rank " + r + " failed; switch " + describe(sw), e);
                        }
                        assertNull(o, at + ": rank " + r);
                    }
                }
                done += count;
            }
            System.out.println("LossStressTest: passed, " + where + "; switch " + describe(sw));
        }
    }

    /** Integer-valued inputs: every sum is exact, whatever the order. */
    private static float value(int rank, int op, int k, int offset) {
        return (float) ((k * 31 + rank * 7 + op * 13 + offset) % 1000 - 500);
    }

    static String describe(SwitchServer sw) {
        SwitchCounters c = sw.engine().counters();
        StringBuilder s = new StringBuilder();
        for (SwitchCounters.Counter k : SwitchCounters.Counter.values()) {
            s.append(k.name().toLowerCase(Locale.ROOT)).append('=').append(c.get(k)).append(' ');
        }
        for (DropReason d : DropReason.values()) {
            if (c.drops(d) > 0) {
                s.append("drop_").append(d.label()).append('=').append(c.drops(d)).append(' ');
            }
        }
        return s.toString().trim();
    }
}
