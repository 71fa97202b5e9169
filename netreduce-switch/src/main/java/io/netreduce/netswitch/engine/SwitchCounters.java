package io.netreduce.netswitch.engine;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Datapath counters. One thread (the datapath) writes with release stores and no
 * read-modify-write; any thread (metrics, tests) reads. Plain {@code long} slots in an
 * {@link AtomicLongArray}, so counting costs no allocation and no lock.
 */
public final class SwitchCounters {
    public enum Counter {
        PACKETS_IN, PACKETS_OUT, AGGREGATIONS_COMPLETED, MESSAGES_COMPLETED, DUPLICATES,
        /**
         * Contributions copied into a rank buffer: with the native lanes those that came
         * before a lower rank's (the rest were added into the sum where they were received),
         * on the Java path every one.
         */
        CONTRIBUTIONS_BUFFERED,
        RETRANSMITTED_RESULTS, STALE_FORWARDS, NON_DATA_FORWARDS, RESULTS_RESENT_IN_ORDER,
        /** Results that completed behind a missing packet and past the one sent to show the gap: sent once it completes. */
        RESULTS_HELD,
        /**
         * Held results sent ahead of the in-order point when it stopped at another missing
         * packet: the first result past that gap, so that receivers NAK it.
         */
        GAPS_SIGNALLED,
        /** Retransmissions of a message still waiting for other ranks, answered "not ready" (a late rank). */
        RNR_NAKS_SENT,
        /**
         * Receivers' sequence NAKs for a packet whose sender's contribution the switch holds
         * while another rank's is missing, passed on as an ACK of what precedes it: the
         * switch sends the packet, and the results after it, once the sum completes.
         */
        NAKS_ABSORBED,
        /**
         * A sender's tail probe (a packet the switch holds, sent again asking for an ACK)
         * while its packet at the PSN its receiver expects next is missing here, answered with
         * the sequence NAK the receiver would send if the probe reached it: the sender goes
         * back N at once instead of probing again.
         */
        PROBES_ANSWERED_WITH_NAK,
        /**
         * Tail probes the switch could not judge because the receiver's last ACK named a
         * result already sent: that result went to the receiver again asking for an ACK, and
         * the ACK settled the probe.
         */
        ACKS_ASKED,
        /**
         * Go-back-N resends of a packet whose result went to every receiver in order since
         * its receiver last NAKed (the lost packet's completion sent it): not sent again.
         */
        RETRANSMISSIONS_ALREADY_SENT,
        /** Retransmissions of a result the receiver had acknowledged: answered with its last ACK (if asked), not re-sent. */
        ACKED_RETRANSMISSIONS,
        /** Packets of messages whose ranks made different calls, passed on marked as such. */
        CALL_MISMATCHES
    }

    private static final int DROPS_BASE = Counter.values().length;
    private final AtomicLongArray values = new AtomicLongArray(DROPS_BASE + DropReason.values().length);

    void increment(Counter c) {
        add(c.ordinal(), 1);
    }

    void add(Counter c, long n) {
        add(c.ordinal(), n);
    }

    void drop(DropReason r) {
        add(DROPS_BASE + r.ordinal(), 1);
    }

    /** Counts a drop decided outside the engine (e.g. the data plane's send failures). */
    public void recordDrop(DropReason r) {
        drop(r);
    }

    /** Counts {@code n} drops decided outside the engine (e.g. a batch the socket could not take). */
    public void recordDrops(DropReason r, long n) {
        add(DROPS_BASE + r.ordinal(), n);
    }

    private void add(int i, long n) {
        values.setRelease(i, values.getPlain(i) + n);
    }

    public long get(Counter c) {
        return values.getAcquire(c.ordinal());
    }

    public long drops(DropReason r) {
        return values.getAcquire(DROPS_BASE + r.ordinal());
    }

    /**
     * Every counter and drop reason that moved, as {@code name=value} pairs (the names of
     * {@code /metrics} without their prefix and suffix), for a one-line account of a run.
     */
    public String summary() {
        StringBuilder b = new StringBuilder();
        for (Counter c : Counter.values()) {
            append(b, c.name().toLowerCase(Locale.ROOT), get(c));
        }
        for (DropReason r : DropReason.values()) {
            append(b, "drops{" + r.label() + "}", drops(r));
        }
        return b.length() == 0 ? "nothing counted" : b.toString();
    }

    private static void append(StringBuilder b, String name, long value) {
        if (value != 0) {
            b.append(b.length() == 0 ? "" : ", ").append(name).append('=').append(value);
        }
    }

    public long totalDrops() {
        long sum = 0;
        for (DropReason r : DropReason.values()) {
            sum += drops(r);
        }
        return sum;
    }
}
