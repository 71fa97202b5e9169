package io.netreduce.verbs.soft;

import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.conformance.ProviderFixture;
import io.netreduce.verbs.conformance.VerbsConformanceTest;
import java.time.Duration;

/**
 * The provider conformance suite against the soft RoCEv2 provider, receiving through the
 * native batched UDP I/O where it loads; {@link SoftNettyReceiveConformanceTest} runs it
 * again on Netty's receive path.
 */
class SoftConformanceTest extends VerbsConformanceTest {
    /** Device properties every device of the suite gets. */
    protected java.util.Map<String, String> properties() {
        return java.util.Map.of();
    }

    /**
     * Long enough that a cold JVM on a busy two-core machine does not exhaust its retries
     * while the JIT is still warming up (each retry resends a whole window), short enough
     * that the peer-loss test ends in about two seconds.
     */
    private static final Duration ACK_TIMEOUT = Duration.ofMillis(250);
    private static final int RETRIES = 7;

    @Override
    protected ProviderFixture fixture() {
        return new ProviderFixture() {
            @Override
            public String providerName() {
                return SoftProvider.NAME;
            }

            @Override
            public DeviceOptions optionsFor(int host) {
                DeviceOptions.Builder b = DeviceOptions.builder().localAddress("127.0.34." + (10 + host));
                properties().forEach(b::property);
                return b.build();
            }

            @Override
            public boolean supportsFaults() {
                return true;
            }

            @Override
            public Duration peerLossDeadline() {
                return ACK_TIMEOUT.multipliedBy(RETRIES + 1).plusSeconds(3);
            }

            @Override
            public QpAttributes.Builder tune(QpAttributes.Builder builder) {
                return builder.ackTimeout(ACK_TIMEOUT).retryCount(RETRIES);
            }
        };
    }
}
