package io.netreduce.netswitch.control;

import io.netreduce.netswitch.dataplane.DataPlane;
import io.netreduce.netswitch.engine.AggregationEngine;
import io.netreduce.netswitch.engine.DropReason;
import io.netreduce.netswitch.engine.SwitchCounters;
import io.netreduce.netswitch.engine.SwitchCounters.Counter;
import io.netreduce.wire.control.ControlPaths;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;

/** Renders the switch's counters in the Prometheus text exposition format (version 0.0.4). */
final class Metrics {
    private final AggregationEngine engine;

    Metrics(AggregationEngine engine) {
        this.engine = engine;
    }

    String render() {
        SwitchCounters c = engine.counters();
        StringBuilder b = new StringBuilder(4096);
        counter(b, "netreduce_switch_packets_in_total", "RoCEv2 datagrams received", c.get(Counter.PACKETS_IN));
        counter(b, "netreduce_switch_packets_out_total", "datagrams emitted (results, re-emissions, forwards)",
                c.get(Counter.PACKETS_OUT));
        counter(b, "netreduce_switch_aggregations_completed_total",
                "packet positions whose rank bitmap filled and were summed", c.get(Counter.AGGREGATIONS_COMPLETED));
        counter(b, "netreduce_switch_messages_completed_total", "messages whose every packet was summed",
                c.get(Counter.MESSAGES_COMPLETED));
        counter(b, "netreduce_switch_duplicates_total", "contributions that came again before completion (not read again)",
                c.get(Counter.DUPLICATES));
        counter(b, "netreduce_switch_contributions_buffered_total",
                "contributions copied into a rank buffer to wait for a lower rank's (or, on the Java path, for the sum); "
                        + "the rest were added into the sum where they were received",
                c.get(Counter.CONTRIBUTIONS_BUFFERED));
        counter(b, "netreduce_switch_retransmitted_results_total",
                "stored results re-emitted for a retransmitted packet", c.get(Counter.RETRANSMITTED_RESULTS));
        counter(b, "netreduce_switch_results_resent_in_order_total",
                "results sent in PSN order once the earlier packet they waited behind completed",
                c.get(Counter.RESULTS_RESENT_IN_ORDER));
        counter(b, "netreduce_switch_results_held_total",
                "results held while an earlier packet was missing, instead of sent to be dropped out of sequence",
                c.get(Counter.RESULTS_HELD));
        counter(b, "netreduce_switch_gaps_signalled_total",
                "held results sent ahead when the in-order sends stopped at another missing packet, so that receivers NAK it",
                c.get(Counter.GAPS_SIGNALLED));
        counter(b, "netreduce_switch_stale_forwards_total", "packets older than the live window forwarded unchanged",
                c.get(Counter.STALE_FORWARDS));
        counter(b, "netreduce_switch_non_data_forwards_total", "ACK/NAK datagrams forwarded unchanged",
                c.get(Counter.NON_DATA_FORWARDS));
        counter(b, "netreduce_switch_rnr_naks_sent_total",
                "retransmissions of a message still waiting for other ranks, answered receiver-not-ready",
                c.get(Counter.RNR_NAKS_SENT));
        counter(b, "netreduce_switch_naks_absorbed_total",
                "receivers' sequence NAKs for a packet held while another rank's is missing, passed on as ACKs",
                c.get(Counter.NAKS_ABSORBED));
        counter(b, "netreduce_switch_probes_answered_with_nak_total",
                "senders' tail probes answered with a sequence NAK for the missing packet their receiver expects",
                c.get(Counter.PROBES_ANSWERED_WITH_NAK));
        counter(b, "netreduce_switch_acks_asked_total",
                "results sent again asking a receiver for an ACK, to answer a tail probe its last ACK could not",
                c.get(Counter.ACKS_ASKED));
        counter(b, "netreduce_switch_retransmissions_already_sent_total",
                "go-back-N resends of a result sent in order since its receiver last NAKed, not sent again",
                c.get(Counter.RETRANSMISSIONS_ALREADY_SENT));
        counter(b, "netreduce_switch_acked_retransmissions_total",
                "retransmissions of a result its receiver had acknowledged, answered with the receiver's last ACK",
                c.get(Counter.ACKED_RETRANSMISSIONS));
        counter(b, "netreduce_switch_call_mismatches_total",
                "first packets of messages whose ranks made different calls, passed on as mismatch notices",
                c.get(Counter.CALL_MISMATCHES));
        b.append("# HELP netreduce_switch_drops_total datagrams dropped, by reason\n");
        b.append("# TYPE netreduce_switch_drops_total counter\n");
        for (DropReason r : DropReason.values()) {
            b.append("netreduce_switch_drops_total{reason=\"").append(r.label()).append("\"} ")
                    .append(c.drops(r)).append('\n');
        }
        long used = engine.memoryUsed();
        gauge(b, "netreduce_switch_aggregator_memory_used_bytes", "aggregator memory reserved by rings", used);
        gauge(b, "netreduce_switch_aggregator_memory_free_bytes", "aggregator memory budget still free",
                engine.memoryBudget() - used);
        gauge(b, "netreduce_switch_rings", "rings configured", engine.rings().size());
        metric(b, ControlPaths.DATAPLANE_CPU_METRIC, "CPU time of the data-plane thread", "counter",
                Double.toString(dataPlaneCpuNanos() / 1e9));
        return b.toString();
    }

    /** The data-plane thread's CPU time (0 if it is not found, or the JVM cannot tell), looked up per scrape. */
    private static long dataPlaneCpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        if (!threads.isThreadCpuTimeSupported()) {
            return 0;
        }
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && DataPlane.THREAD_NAME.equals(t.getThreadName())) {
                return Math.max(0, threads.getThreadCpuTime(t.getThreadId()));
            }
        }
        return 0;
    }

    private static void counter(StringBuilder b, String name, String help, long v) {
        metric(b, name, help, "counter", Long.toString(v));
    }

    private static void gauge(StringBuilder b, String name, String help, long v) {
        metric(b, name, help, "gauge", Long.toString(v));
    }

    private static void metric(StringBuilder b, String name, String help, String type, String value) {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        b.append(name).append(' ').append(value).append('\n');
    }
}
