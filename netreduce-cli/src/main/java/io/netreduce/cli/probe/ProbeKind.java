package io.netreduce.cli.probe;

/** The two measurements: RDMA WRITE bandwidth and SEND/RECV ping-pong round-trip time. */
enum ProbeKind {
    BW, RTT;

    String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
