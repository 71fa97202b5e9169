package io.netreduce.verbs.soft;

import java.util.Map;

/** {@link SoftConformanceTest} with the devices receiving through Netty's channel ({@code soft.nativeIo=false}). */
class SoftNettyReceiveConformanceTest extends SoftConformanceTest {
    @Override
    protected Map<String, String> properties() {
        return Map.of(SoftProperties.NATIVE_IO, "false");
    }
}
