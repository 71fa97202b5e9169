package io.netreduce.verbs.tcp;

import io.netreduce.verbs.DeviceOptions;
import io.netreduce.verbs.conformance.ProviderFixture;
import io.netreduce.verbs.conformance.VerbsConformanceTest;

/**
 * The conformance suite against the TCP provider: always runs, once per progress mode
 * (a subclass each), since the two move the bytes on different threads.
 */
abstract class TcpConformanceTest extends VerbsConformanceTest {

    abstract TcpProgress progress();

    @Override
    protected ProviderFixture fixture() {
        return new ProviderFixture() {
            @Override
            public String providerName() {
                return "tcp";
            }

            @Override
            public DeviceOptions optionsFor(int host) {
                return DeviceOptions.builder().localAddress("127.0.0." + (10 + host)).port(0)
                        .property(TcpVerbsProvider.PROGRESS, progress().name()).build();
            }
        };
    }
}
