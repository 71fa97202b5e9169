package io.netreduce.verbs;

/**
 * What a provider counts, per queue pair and per device. Drop counters name their reason,
 * so a user can tell injected loss from corruption from protocol trouble.
 */
public enum Counter {
    PACKETS_SENT("packets sent, including retransmissions and ACKs"),
    BYTES_SENT("wire bytes sent (RoCE headers, payload, ICRC)"),
    PAYLOADS_GATHERED("packets whose payload the socket gathered from registered memory, with no copy in user space"),
    PACKETS_RECEIVED("packets received and accepted"),
    BYTES_RECEIVED("wire bytes received and accepted"),
    MESSAGES_SENT("messages completed: their last packet acknowledged, or (tcp) written under a receive credit"),
    CREDITED_SENDS("SENDs completed once written, into receives the responder had credited, with no ACK (tcp)"),
    FALLBACK_DRIVES("looks at a queue pair nobody had polled, by its device's fallback (tcp, polled progress)"),
    MESSAGES_RECEIVED("messages delivered to a receive request or memory region"),
    RETRANSMITTED_PACKETS("request packets sent again by go-back-N"),
    RETRY_SEQUENCES("go-back-N restarts (ACK timeout or sequence NAK)"),
    ACK_TIMEOUTS("local ACK timer expiries"),
    TAIL_PROBES("tail-loss probes: the newest unacknowledged packet sent again after a quiet spell"),
    ACKS_SENT("ACK packets sent"),
    NAKS_SENT("sequence-error NAKs sent"),
    NAKS_RECEIVED("sequence-error NAKs received"),
    RNR_NAKS_SENT("RNR NAKs sent (no receive posted)"),
    RNR_NAKS_RECEIVED("RNR NAKs received"),
    RNR_READY_NOTICES_SENT("receive credits sent to a requester in RNR backoff as soon as a receive was posted (tcp)"),
    RNR_WAITS_CUT("RNR backoffs ended before the responder's RNR timer by its credit for the receive wanted (tcp)"),
    DUPLICATES_RECEIVED("duplicate requests re-acknowledged, not re-executed"),
    DROP_BAD_ICRC("packets dropped: ICRC mismatch"),
    DROP_MALFORMED("packets dropped: truncated or inconsistent headers"),
    DROP_UNKNOWN_QP("packets dropped: no queue pair with that number"),
    DROP_OUT_OF_SEQUENCE("packets dropped: PSN past the expected one"),
    DROP_BAD_STATE("packets dropped: queue pair not ready"),
    DROP_UNEXPECTED("packets dropped: response not matching any outstanding request"),
    DROP_QUEUE_FULL("packets dropped: receive queue overflow"),
    DROP_SEND_BUFFER_FULL("packets dropped: the socket's send buffer stayed full"),
    INJECTED_LOSS("packets dropped by injected faults"),
    INJECTED_DUPLICATES("packets duplicated by injected faults"),
    INJECTED_REORDERS("packets reordered by injected faults"),
    INJECTED_CORRUPTIONS("packets corrupted by injected faults");

    private final String description;

    Counter(String description) {
        this.description = description;
    }

    public String description() {
        return description;
    }

    /** Prometheus-style metric name, e.g. {@code netreduce_drop_bad_icrc_total}. */
    public String metricName() {
        return "netreduce_" + name().toLowerCase(java.util.Locale.ROOT) + "_total";
    }
}
