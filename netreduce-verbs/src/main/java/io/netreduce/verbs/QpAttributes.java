package io.netreduce.verbs;

import io.netreduce.wire.roce.PathMtu;
import java.time.Duration;
import java.util.Objects;

/**
 * Creation attributes of an RC queue pair: its completion queues and queue sizes and the
 * reliability knobs of ibverbs' {@code ibv_modify_qp} (path MTU, ACK timeout, retry and
 * RNR retry counts, minimum RNR timer). Immutable; build with {@link #builder}.
 */
public final class QpAttributes {
    /** Retry count value meaning "retry forever" (for RNR retries, as in ibverbs). */
    public static final int INFINITE_RETRY = 7;
    /** Retries after an ACK timeout or sequence NAK unless set (the most the 3-bit field holds). */
    public static final int DEFAULT_RETRY_COUNT = 7;

    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final int maxSendWr;
    private final int maxRecvWr;
    private final int maxSge;
    private final int mtu;
    private final Duration ackTimeout;
    private final int retryCount;
    private final int rnrRetry;
    private final Duration minRnrTimer;
    private final int initialPsn;

    private QpAttributes(Builder b) {
        this.sendCq = Objects.requireNonNull(b.sendCq, "send completion queue");
        this.recvCq = Objects.requireNonNull(b.recvCq, "receive completion queue");
        this.maxSendWr = positive(b.maxSendWr, "maxSendWr");
        this.maxRecvWr = positive(b.maxRecvWr, "maxRecvWr");
        this.maxSge = positive(b.maxSge, "maxSge");
        this.mtu = PathMtu.check(b.mtu);
        this.ackTimeout = Objects.requireNonNull(b.ackTimeout, "ackTimeout");
        if (b.ackTimeout.isNegative() || b.ackTimeout.isZero()) {
            throw new IllegalArgumentException("ackTimeout must be positive: " + b.ackTimeout);
        }
        this.retryCount = range(b.retryCount, 0, 7, "retryCount");
        this.rnrRetry = range(b.rnrRetry, 0, 7, "rnrRetry");
        this.minRnrTimer = Objects.requireNonNull(b.minRnrTimer, "minRnrTimer");
        this.initialPsn = b.initialPsn;
        if (initialPsn != -1 && (initialPsn & ~0xFFFFFF) != 0) {
            throw new IllegalArgumentException("initialPsn must fit 24 bits: " + initialPsn);
        }
    }

    public static Builder builder(CompletionQueue sendCq, CompletionQueue recvCq) {
        return new Builder(sendCq, recvCq);
    }

    private static int positive(int v, String what) {
        if (v <= 0) {
            throw new IllegalArgumentException(what + " must be positive: " + v);
        }
        return v;
    }

    private static int range(int v, int lo, int hi, String what) {
        if (v < lo || v > hi) {
            throw new IllegalArgumentException(what + " must be in [" + lo + ", " + hi + "]: " + v);
        }
        return v;
    }

    public CompletionQueue sendCq() { return sendCq; }
    public CompletionQueue recvCq() { return recvCq; }
    public int maxSendWr() { return maxSendWr; }
    public int maxRecvWr() { return maxRecvWr; }
    public int maxSge() { return maxSge; }
    public int mtu() { return mtu; }
    /** Local ACK timeout: how long the requester waits for an ACK before a retry sequence. */
    public Duration ackTimeout() { return ackTimeout; }
    /** Retry sequences (timeouts or sequence NAKs) before RETRY_EXC_ERR. */
    public int retryCount() { return retryCount; }
    /** RNR retries before RNR_RETRY_EXC_ERR; 7 means infinite. */
    public int rnrRetry() { return rnrRetry; }
    /** Delay the responder asks for in an RNR NAK. */
    public Duration minRnrTimer() { return minRnrTimer; }
    /** First PSN this queue pair sends, or -1 for a random one. */
    public int initialPsn() { return initialPsn; }

    /** Builder with the defaults of Linux rxe (the kernel's drivers/infiniband/sw/rxe), with the ACK timeout scaled for a software transport. */
    public static final class Builder {
        private final CompletionQueue sendCq;
        private final CompletionQueue recvCq;
        private int maxSendWr = 256;
        private int maxRecvWr = 256;
        private int maxSge = 4;
        private int mtu = 1024;
        private Duration ackTimeout = Duration.ofMillis(67);
        private int retryCount = DEFAULT_RETRY_COUNT;
        private int rnrRetry = 7;
        private Duration minRnrTimer = Duration.ofNanos(1_280_000);
        private int initialPsn = -1;

        private Builder(CompletionQueue sendCq, CompletionQueue recvCq) {
            this.sendCq = sendCq;
            this.recvCq = recvCq;
        }

        public Builder maxSendWr(int v) { maxSendWr = v; return this; }
        public Builder maxRecvWr(int v) { maxRecvWr = v; return this; }
        public Builder maxSge(int v) { maxSge = v; return this; }
        public Builder mtu(int v) { mtu = v; return this; }
        public Builder ackTimeout(Duration v) { ackTimeout = v; return this; }
        public Builder retryCount(int v) { retryCount = v; return this; }
        public Builder rnrRetry(int v) { rnrRetry = v; return this; }
        public Builder minRnrTimer(Duration v) { minRnrTimer = v; return this; }
        public Builder initialPsn(int v) { initialPsn = v; return this; }

        public QpAttributes build() {
            return new QpAttributes(this);
        }
    }
}
