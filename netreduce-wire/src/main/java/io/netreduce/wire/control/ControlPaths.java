package io.netreduce.wire.control;

/** The control plane's resources (HTTP paths), spelled once for the switch and its clients. */
public final class ControlPaths {
    /** {@code GET}: every ring; {@code POST}: create one. */
    public static final String RINGS = "/rings";
    /** {@code GET}: Prometheus text format. */
    public static final String METRICS = "/metrics";
    /** The {@link #METRICS} counter of the data-plane thread's CPU time, in seconds (what a benchmark reads beside its own). */
    public static final String DATAPLANE_CPU_METRIC = "netreduce_switch_dataplane_cpu_seconds_total";
    /** The last path element of a ring's connections resource. */
    public static final String CONNECTIONS = "connections";
    /** The switch's default control-plane port. */
    public static final int DEFAULT_PORT = 7100;

    private ControlPaths() {
    }

    /** {@code GET} or {@code DELETE} one ring. */
    public static String ring(int ringId) {
        return RINGS + "/" + Integer.toUnsignedString(ringId);
    }

    /** {@code POST} one connection or an array of them. */
    public static String connections(int ringId) {
        return ring(ringId) + "/" + CONNECTIONS;
    }
}
