package io.netreduce.wire.ina;

/**
 * The switch's answer to a late rank (docs/switch.md, rule 6), which hosts must know: a
 * retransmitted first packet of a message that has waited this long for other ranks, at the
 * PSN its receiver expects, gets an RNR NAK on the receiver's behalf, so its sender waits
 * without spending retries. Before that the sender's own retry budget (ACK timeout ×
 * (retries + 1)) is all that keeps it from giving up on a late rank.
 */
public final class LateRank {
    /** 50 ms: later than the soft provider's tail probes, a quarter of the hosts' default ACK timeout. */
    public static final long ANSWER_AFTER_NANOS = 50_000_000L;

    private LateRank() {
    }
}
