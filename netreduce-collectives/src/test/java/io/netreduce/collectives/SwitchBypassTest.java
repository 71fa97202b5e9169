package io.netreduce.collectives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netreduce.netswitch.engine.SwitchCounters;
import java.nio.FloatBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * End-to-end aggregate check: when the ring's packets go around the switch (here, devices
 * that ignore their gateway), every rank receives its predecessor's tensor instead of the
 * sum. The switch marks every result it emits; the hosts check the mark and the count of
 * contributions, so every rank fails with a message saying so, within the timeout, and no
 * rank returns a sum.
 */
@Timeout(60)
@SuppressWarnings("try")
class SwitchBypassTest {

    @Test
    void messagesThatWentAroundTheSwitchFailEveryRankInsteadOfReturningAWrongSum() throws Exception {
        int p = 3;
        int n = 5 * TestGroup.MESSAGE_BYTES / 4 + 7;
        long seed = 314;
        try (RealSwitch sw = RealSwitch.start(1L << 30);
             TestGroup g = TestGroup.open(p, TestGroup.template(CommunicatorConfig.NETREDUCE)
                     .transport(SwitchBypassProvider.NAME).switchAddress(sw.data()).switchControl(sw.control())
                     .timeout(Duration.ofSeconds(10)), 1L << 30)) {
            // The ring was created and its connections registered: only the data path is wrong.
            assertEquals(CommunicatorConfig.NETREDUCE, g.comms.get(0).algorithm());
            Random random = new Random(seed);
            FloatBuffer[] tensors = new FloatBuffer[p];
            for (int r = 0; r < p; r++) {
                tensors[r] = Tensors.make(Tensors.Kind.DIRECT, Tensors.random(random, n));
            }
            long t0 = System.nanoTime();
            List<Object> out = g.onEveryRank((r, c) -> {
                c.allReduce(tensors[r]);
                return "returned";
            }, 30);
            long millis = (System.nanoTime() - t0) / 1_000_000;
            for (int r = 0; r < p; r++) {
                CollectiveException e = assertInstanceOf(CollectiveException.class, out.get(r),
                        "seed " + seed + ": rank " + r + " must fail, not return a sum");
                assertTrue(e.getMessage().contains("did not come from the NetReduce switch")
                        || e.getMessage().contains("the group reports"), "rank " + r + ": " + e.getMessage());
            }
            assertTrue(millis < 10_000, "every rank failed within the 10 s timeout, took " + millis + " ms");
            assertEquals(0, sw.server().engine().counters().get(SwitchCounters.Counter.PACKETS_IN),
                    "no packet reached the switch");
        }
    }
}
