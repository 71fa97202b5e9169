package io.netreduce.verbs.tcp;

import io.netreduce.verbs.conformance.ProviderFixture;
import io.netreduce.verbs.conformance.VerbsConformanceTest;

/** The conformance suite against the TCP provider: always runs. */
class TcpConformanceTest extends VerbsConformanceTest {
    @Override
    protected ProviderFixture fixture() {
        return new ProviderFixture() {
            @Override
            public String providerName() {
                return "tcp";
            }
        };
    }
}
