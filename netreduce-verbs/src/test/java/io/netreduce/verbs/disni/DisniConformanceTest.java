package io.netreduce.verbs.disni;

import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.conformance.ProviderFixture;
import io.netreduce.verbs.conformance.VerbsConformanceTest;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.slf4j.LoggerFactory;

/**
 * The conformance suite against real RDMA. Runs when DiSNI can start here (libdisni.so,
 * rdma-core and an RDMA device present) and {@value #ADDRESS_PROPERTY} names the IP address
 * of an RDMA-capable interface (both emulated hosts use it, each on its own CM port);
 * otherwise every test is reported as skipped with the reason. See native/README.md.
 */
class DisniConformanceTest extends VerbsConformanceTest {
    static final String ADDRESS_PROPERTY = "netreduce.disni.address";

    /** Says once, on the console, why the leg is skipped (the per-test reason is in the report). */
    @BeforeAll
    static void reportSkipReason() {
        String reason = new DisniConformanceTest().fixture().skipReason();
        if (reason != null) {
            LoggerFactory.getLogger(DisniConformanceTest.class).warn("DiSNI conformance leg skipped: {}", reason);
        }
    }

    @Override
    protected ProviderFixture fixture() {
        return new ProviderFixture() {
            @Override
            public String providerName() {
                return DisniVerbsProvider.NAME;
            }

            @Override
            public String skipReason() {
                String reason = super.skipReason();
                if (reason == null && System.getProperty(ADDRESS_PROPERTY) == null) {
                    return "set -D" + ADDRESS_PROPERTY + "=<IP of an RDMA interface> to run the DiSNI leg";
                }
                return reason;
            }

            @Override
            public DeviceOptions optionsFor(int host) {
                return DeviceOptions.builder().localAddress(System.getProperty(ADDRESS_PROPERTY)).port(0).build();
            }

            @Override
            public boolean countsTransportEvents() {
                return false; // the NIC's counters are not visible through DiSNI
            }

            @Override
            public Duration peerLossDeadline() {
                return Duration.ofSeconds(20); // hardware: ACK timeout × retries, set by RDMA CM
            }
        };
    }
}
