package io.netreduce.cli.probe;

import java.time.Duration;
import java.util.List;

/** What the client asks for; the server learns it over the side channel. */
record ProbeParameters(ProbeKind kind, String transport, int mtu, List<Long> sizes, int iterations, int warmup,
                       int txDepth, Duration timeout) {
    long maxSize() {
        return sizes.stream().mapToLong(Long::longValue).max().orElseThrow();
    }
}
