package io.netreduce.wire.udp;

/**
 * What the Linux kernel accepts in one UDP generic-segmentation-offload send
 * ({@code UDP_SEGMENT}): the super-datagram is one UDP datagram, so it stays below the
 * 64 KiB IPv4 limit with room for headers, and it holds at most {@code UDP_MAX_SEGMENTS}
 * segments (64 on the oldest kernels that have GSO). Every batched sender (the soft
 * provider's egress, the switch's transmitter) cuts its batches by these.
 */
public final class GsoLimits {
    /** Largest super-datagram, UDP payload bytes. */
    public static final int MAX_BYTES = 65_000;
    /** Most segments in one super-datagram. */
    public static final int MAX_SEGMENTS = 64;

    private GsoLimits() {
    }

    /** True if a batch of {@code segments} segments using {@code bytes} can take one more of {@code length}. */
    public static boolean fits(int segments, int bytes, int length) {
        return segments < MAX_SEGMENTS && bytes + length <= MAX_BYTES;
    }
}
