package io.netreduce.verbs.soft;

import java.util.Map;

/**
 * {@link SoftConformanceTest} with the polling threads running the protocol
 * ({@code soft.progress=caller}): every verb behaves as where the event loop runs it, and a
 * queue pair whose application never polls still makes progress (the idle drive).
 */
class SoftCallerProgressConformanceTest extends SoftConformanceTest {
    @Override
    protected Map<String, String> properties() {
        return Map.of(SoftProperties.PROGRESS, "caller");
    }
}
