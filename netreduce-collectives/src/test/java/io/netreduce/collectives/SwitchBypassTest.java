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
 * rank returns a sum (here already at open, whose first all-reduce goes through the switch).
 */
@Timeout(60)
@SuppressWarnings("try")
class SwitchBypassTest {

    /**
     * Joining a netreduce group sends one all-reduce through the switch, so the wrong path is
     * found at {@code open}: every rank's open fails, naming the cause or the rank that found
     * it, within the timeout, and no communicator is handed out.
     */
    @Test
    void messagesThatWentAroundTheSwitchFailEveryRankInsteadOfReturningAWrongSum() throws Exception {
        int p = 3;
        try (RealSwitch sw = RealSwitch.start(1L << 30)) {
            long t0 = System.nanoTime();
            List<Object> opened = TestGroup.openEach(p, TestGroup.template(CommunicatorConfig.NETREDUCE)
                    .transport(SwitchBypassProvider.NAME).switchAddress(sw.data()).switchControl(sw.control())
                    .timeout(Duration.ofSeconds(10)), 30);
            long millis = (System.nanoTime() - t0) / 1_000_000;
            try {
                for (int r = 0; r < p; r++) {
                    CollectiveException e = assertInstanceOf(CollectiveException.class, opened.get(r),
                            "rank " + r + " must fail to open, not hand out a communicator");
                    assertTrue(e.getMessage().contains("did not come from the NetReduce switch")
                            || e.getMessage().contains("could not join"), "rank " + r + ": " + e.getMessage());
                }
                assertTrue(opened.stream().map(o -> ((Exception) o).getMessage()).anyMatch(
                        m -> m.contains("did not come from the NetReduce switch")), "the cause is named: " + opened);
            } finally {
                TestGroup.closeAll(opened);
            }
            assertTrue(millis < 5_000, "every rank failed well within the 10 s timeout, took " + millis + " ms");
            assertEquals(0, sw.server().engine().counters().get(SwitchCounters.Counter.PACKETS_IN),
                    "no packet reached the switch");
        }
    }
}
