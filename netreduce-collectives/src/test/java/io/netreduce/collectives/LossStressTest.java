package io.netreduce.collectives;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netreduce.netswitch.SwitchServer;
import io.netreduce.netswitch.engine.DropReason;
import io.netreduce.netswitch.engine.SwitchCounters;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsProvider;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Liveness of the netreduce all-reduce under heavy random loss: P = 4 ranks on the soft RoCEv2
 * provider through a real in-process switch, 5 % seeded loss on every device's egress (data
 * packets to the switch and ACKs/NAKs back), a short 200 ms ACK timeout, many all-reduces of
 * varied sizes, each result checked bitwise. Through the switch a sender's ACK waits for every
 * rank's packet, so this is where a retry budget that does not survive another rank's recovery,
 * or a switch rule that answers a retransmission wrongly, shows up as RETRY_EXC_ERR.
 *
 * <p>The default run is short enough for CI. The long one (50 all-reduces of 4 KiB .. 2 MiB) runs
 * with {@code -Dnetreduce.test.stress=true}; {@code -Dnetreduce.test.stress.seed=S} picks the
 * seed (default: random, printed), {@code -Dnetreduce.test.stress.ackTimeoutMs=T} the ACK timeout.
 */
@Timeout(600)
@SuppressWarnings("try")
class LossStressTest {
    private static final boolean LONG = Boolean.getBoolean("netreduce.test.stress");

    @Test
    void allReducesThroughTheSwitchStayLiveAtFivePercentLoss() throws Exception {
        assumeTrue(Verbs.providers().stream().map(VerbsProvider::name).anyMatch("soft"::equals),
                "the soft verbs provider is not on the class path");
        long seed = Long.getLong("netreduce.test.stress.seed", LONG ? new Random().nextLong() : 20260611L);
        int iterations = Integer.getInteger("netreduce.test.stress.iterations", LONG ? 50 : 8);
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
                    .transport("soft").loopbackPrefix(TestGroup.loopbackPrefix())
                    .faults(FaultPlan.loss(seed, loss)).ackTimeout(ackTimeout).timeout(Duration.ofSeconds(60))
                    .switchAddress(sw.dataAddress())
                    .switchControl(URI.create("http://127.0.0.1:" + sw.controlAddress().getPort()));
            try (TestGroup g = TestGroup.open(p, b, 1L << 30)) {
                Random random = new Random(seed);
                for (int it = 0; it < iterations; it++) {
                    // 4 KiB .. maxBytes, log-uniform, plus an odd element count now and then.
                    int bytes = (int) Math.round(4096 * Math.pow((double) maxBytes / 4096, random.nextDouble()));
                    int n = Math.max(1, bytes / 4 - (random.nextInt(3) == 0 ? random.nextInt(1000) : 0));
                    float[][] inputs = new float[p][];
                    FloatBuffer[] tensors = new FloatBuffer[p];
                    for (int r = 0; r < p; r++) {
                        inputs[r] = Tensors.random(random, n);
                        tensors[r] = Tensors.make(Tensors.Kind.DIRECT, inputs[r]);
                    }
                    int iteration = it;
                    try {
                        g.all((r, c) -> {
                            c.allReduce(tensors[r]);
                            return null;
                        }, 120);
                    } catch (Exception e) {
                        throw new AssertionError(where + ": all-reduce " + iteration + " of " + n
                                + " elements failed; switch " + describe(sw), e);
                    }
                    float[] expected = Tensors.rankOrderSum(inputs);
                    for (int r = 0; r < p; r++) {
                        assertNull(Tensors.diff(tensors[r], expected), where + ", all-reduce " + it + ", n=" + n
                                + ", rank " + r);
                    }
                }
                System.out.println("LossStressTest: passed, " + where + "; switch " + describe(sw));
            }
        }
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
