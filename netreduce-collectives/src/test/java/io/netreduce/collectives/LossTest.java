package io.netreduce.collectives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netreduce.verbs.Capability;
import io.netreduce.verbs.FaultPlan;
import io.netreduce.verbs.Verbs;
import io.netreduce.verbs.VerbsProvider;
import java.time.Duration;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * All-reduce under 1 % injected packet loss on every device, over the lossy packet
 * transport named by {@code netreduce.test.lossy.transport} (default "soft", the RoCEv2
 * provider whose go-back-N retransmission must hide the loss). Skipped, saying so, when
 * that provider is not on the class path.
 */
@Timeout(180)
@SuppressWarnings("try")
class LossTest {
    private static final String LOSSY = System.getProperty("netreduce.test.lossy.transport", "soft");

    @ParameterizedTest(name = "{0} P={1}")
    @CsvSource({"ring,4", "netreduce,4"})
    void resultsAreExactUnderOnePercentLoss(String algorithm, int p) throws Exception {
        assumeTrue(Verbs.providers().stream().map(VerbsProvider::name).anyMatch(LOSSY::equals),
                "verbs provider '" + LOSSY + "' is not on the class path");
        assumeTrue(Verbs.provider(LOSSY).capabilities().has(Capability.INJECTED_FAULTS),
                "verbs provider '" + LOSSY + "' cannot inject packet loss");
        long seed = 2026;
        CommunicatorConfig.Builder b = TestGroup.template(algorithm).transport(LOSSY)
                .faults(FaultPlan.loss(seed, 0.01)).timeout(Duration.ofSeconds(60));
        try (TestGroup g = TestGroup.open(p, b, 1L << 30)) {
            String actual = g.comms.get(0).algorithm();
            assertEquals(algorithm, actual, "the loss test must run the algorithm it names");
            int round = 0;
            for (int n : new int[] {1, 255, TestGroup.MESSAGE_BYTES / 4 + 1, 200_003}) {
                AllReduceTest.checkOnce(g, actual, n, Tensors.Kind.values()[round % 3], seed + round++);
            }
        }
    }
}
