package io.netreduce.verbs.soft;

import io.netreduce.verbs.Counter;
import io.netreduce.verbs.Counters;
import io.netreduce.verbs.QpAttributes;
import io.netreduce.verbs.ScatterGatherList;
import io.netreduce.verbs.WcOpcode;
import io.netreduce.verbs.WcStatus;
import io.netreduce.wire.roce.Aeth;
import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.roce.ImmDt;
import io.netreduce.wire.roce.Opcode;
import io.netreduce.wire.roce.Psn;
import io.netreduce.wire.roce.Reth;
import io.netreduce.wire.roce.RoceFrame;
import java.nio.ByteBuffer;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The send side of a queue pair: rxe's requester and completer in one object, confined to
 * whoever runs the device's protocol (the kernel's rxe_req.c does the same work). It walks the send ring, cuts each message into
 * First/Middle/Last/Only packets of one PSN each, keeps at most {@code maxOutstanding}
 * PSNs unacknowledged (32 after a loss, growing back as ACKs come: {@link #window}),
 * completes work requests on cumulative ACKs, goes back N on a
 * sequence NAK or an ACK timeout, waits out RNR NAKs, and ends in RETRY_EXC_ERR /
 * RNR_RETRY_EXC_ERR when its retry budgets run out.
 *
 * <p>A lost tail (the last packets of a burst, or the ACK that answers them) leaves the
 * responder nothing to NAK, and the ACK timeout is long (it is also how a dead peer is
 * found). So with packets unacknowledged and no answer for a probe timeout
 * {@code PTO = max(2 × smoothed RTT, tail probe floor)}, the newest packet is sent again
 * asking for an ACK: the responder takes it if it was the one lost, re-ACKs it if the ACK
 * was lost, or NAKs the gap before it; on a link that was only slow it costs one duplicate
 * packet. Probes back off (PTO, 2 PTO, 4 PTO, ...; PTO at most an eighth of the ACK timeout,
 * since through a NetReduce switch the round trip includes waits for other ranks) and
 * alternate with the oldest unacknowledged packet: a lost NAK leaves the responder silently
 * dropping everything but the PSN it expects (it still answers duplicates, and then NAKs
 * the next gap), and a switch that lost a message's first packet drops its later ones.
 * Probes never rewind the requester and spend no retry: go-back-N happens on a NAK or the
 * ACK timeout only, so a slow link costs duplicates, not windows. An ACK that covers the
 * packet an RNR NAK named ends the RNR wait at once (the switch completed the message
 * meanwhile). docs/protocol.md, "Requester (send side)", says the same for users.
 */
final class Requester {
    private static final Logger LOG = LoggerFactory.getLogger(Requester.class);
    private final SoftQueuePair qp;
    private final WorkRing<SendWqe> ring;
    private final Counters counters;
    private final int mtu;
    private final int maxOutstanding;
    /**
     * PSNs that may be unacknowledged now: {@link #maxOutstanding}, set to
     * {@link #WINDOW_AFTER_LOSS} at each loss the requester reacts to (a sequence NAK that
     * rewinds it, an ACK timeout), and grown back by every PSN acknowledged (so it doubles
     * per round trip). Go-back-N resends whatever followed the lost packet; through a
     * NetReduce switch, which holds what followed, the first of them completes the sum and
     * the receiver's ACK then covers the rest, so a small resend window saves resending
     * what is already there, and at a high loss rate a full window resent per loss is itself
     * hit by losses.
     */
    private int window;
    /** The window after a loss (128 KiB at MTU 4096). */
    static final int WINDOW_AFTER_LOSS = 32;
    private final int ackEvery;
    private final long ackTimeoutNanos;
    private final long tailProbeNanos;
    private final int retryCount;
    private final int rnrRetry;
    private final Bth bth = new Bth();
    private final Reth reth = new Reth();
    private final ImmDt immDt = new ImmDt();
    private final Runnable timerTask;
    private final Runnable rnrResumeTask;
    /**
     * Where callers drive the device its drives run the timers ({@link #runDueTimers}), so no
     * post or ACK reaches into the event loop to arm one; else the event loop schedules them.
     */
    private final boolean timersPolled;

    private Egress egress;
    private int remoteQpn;

    /** Oldest send WQE not yet completed (ring index). */
    private long compIndex;
    /** WQE holding the next packet to send, and that packet's index within it. */
    private long reqIndex;
    private int reqPacket;
    /** Next PSN to send (rewinds on go-back-N). */
    private int reqPsn;
    /** Oldest unacknowledged PSN. */
    private int unackedPsn;
    /** One past the highest PSN ever sent. */
    private int sentPsn;
    private int packetsSinceAckReq;
    /** Where in its entry {@link #sgeHolding} found the payload. */
    private int gatherSkip;
    private int retriesLeft;
    private int rnrRetriesLeft;
    /** PSN a sequence NAK already rewound to; a repeat of it is a duplicate, not news. */
    private int lastNakPsn = -1;
    private boolean rnrWaiting;
    private ScheduledFuture<?> timer;
    private boolean timerArmed;
    private long timerDueNanos;
    private boolean rnrResumeArmed;
    private long rnrResumeDueNanos;
    /** When the peer last acknowledged something new, and what the retries since then were: for the error. */
    private long lastProgressNanos = System.nanoTime();
    private int timeoutsSinceProgress;
    private int naksSinceProgress;
    private long deadlineNanos;
    /** When the next probe of this quiet spell is due unless an answer comes first, and how many went before it. */
    private long probeDeadlineNanos;
    private int probes;
    /** The PSN the last RNR NAK named. */
    private int rnrPsn;
    /** Smoothed round trip (RFC 6298's SRTT, 0 before the first sample) and the one packet being timed (Karn: never a resent one). */
    private long srttNanos;
    private boolean timing;
    private int timedPsn;
    private long timedSentNanos;

    Requester(SoftQueuePair qp, WorkRing<SendWqe> ring, QpAttributes attributes, SendSettings settings,
              Counters counters) {
        this.qp = qp;
        this.ring = ring;
        this.counters = counters;
        this.mtu = attributes.mtu();
        this.maxOutstanding = settings.maxOutstanding();
        this.window = maxOutstanding;
        this.ackEvery = settings.ackEvery();
        this.tailProbeNanos = settings.tailProbeNanos();
        this.ackTimeoutNanos = attributes.ackTimeout().toNanos();
        this.retryCount = attributes.retryCount();
        this.rnrRetry = attributes.rnrRetry();
        this.retriesLeft = retryCount;
        this.rnrRetriesLeft = rnrRetry;
        this.timersPolled = qp.callerDrives();
        this.timerTask = qp.guarded(this::onTimer);
        this.rnrResumeTask = qp.guarded(this::onRnrResume);
    }

    /** Called by whoever runs the protocol when the queue pair connects. */
    void connect(Egress egress, int remoteQpn, int initialPsn) {
        this.egress = egress;
        this.remoteQpn = remoteQpn;
        this.reqPsn = initialPsn;
        this.unackedPsn = initialPsn;
        this.sentPsn = initialPsn;
    }

    private boolean outstanding() {
        return sentPsn != unackedPsn;
    }

    /** Sends as many packets as the window allows. */
    void pump() {
        if (rnrWaiting || egress == null) {
            return;
        }
        long posted = ring.posted();
        boolean wasIdle = !outstanding();
        while (reqIndex < posted && Psn.diff(reqPsn, unackedPsn) < window) {
            SendWqe w = ring.at(reqIndex);
            if (!w.started) {
                String bad = validate(w);
                if (bad != null) {
                    qp.fail(WcStatus.LOC_PROT_ERR, bad, reqIndex);
                    return;
                }
                w.firstPsn = reqPsn;
                w.lastPsn = Psn.add(reqPsn, w.packets - 1);
                w.started = true;
            }
            int psn = Psn.add(w.firstPsn, reqPacket);
            boolean ackReq = sendPacket(w, reqPacket, psn, false);
            reqPsn = Psn.next(psn);
            if (Psn.isAfter(reqPsn, sentPsn)) {
                sentPsn = reqPsn;
                if (ackReq && !timing) {
                    timing = true;
                    timedPsn = psn;
                    timedSentNanos = System.nanoTime();
                }
            } else {
                counters.increment(Counter.RETRANSMITTED_PACKETS);
            }
            if (++reqPacket == w.packets) {
                reqPacket = 0;
                reqIndex++;
            }
        }
        if (wasIdle && outstanding()) {
            long now = System.nanoTime();
            deadlineNanos = now + ackTimeoutNanos;
            quietFrom(now);
        }
        armTimer();
    }

    /** Starts a quiet spell at {@code now} (something was answered, or sending began): the first probe is one PTO away. */
    private void quietFrom(long now) {
        probes = 0;
        probeDeadlineNanos = now + probeTimeout();
    }

    private long probeTimeout() {
        return Math.min(Math.max(2 * srttNanos, tailProbeNanos), ackTimeoutNanos / 8);
    }

    /**
     * The post checked the list ({@link io.netreduce.verbs.support.ScatterGather}); a region
     * deregistered between the post and the first packet is what is left to catch, as a NIC
     * reports it: LOC_PROT_ERR.
     */
    private String validate(SendWqe w) {
        ScatterGatherList sgl = w.sgl;
        for (int i = 0; i < sgl.count(); i++) {
            SoftMemoryRegion mr = (SoftMemoryRegion) sgl.region(i);
            if (mr.isClosed()) {
                return "SGE " + i + " names a memory region deregistered after the post (lkey 0x"
                        + Integer.toHexString(mr.lkey()) + ")";
            }
        }
        return null;
    }

    /** Builds and queues packet {@code index} of {@code w} as PSN {@code psn}; returns whether it asks for an ACK. */
    private boolean sendPacket(SendWqe w, int index, int psn, boolean forceAckReq) {
        boolean write = w.opcode.isRdmaWrite();
        boolean imm = w.opcode.hasImmediate();
        int opcode = write ? Opcode.write(index, w.packets, imm) : Opcode.send(index, w.packets, imm);
        int offset = index * mtu;
        int payload = Math.min(mtu, w.length - offset);
        boolean end = index == w.packets - 1;
        boolean ackReq = forceAckReq || end || ++packetsSinceAckReq >= ackEvery
                || Psn.diff(psn, unackedPsn) + 1 >= window;
        if (ackReq) {
            packetsSinceAckReq = 0;
        }
        int pad = RoceFrame.padFor(payload);
        int length = RoceFrame.datagramLength(opcode, payload);
        int at = egress.begin(length);
        ByteBuffer b = egress.buffer();
        bth.wrap(b, at).set(opcode, end && w.solicited, pad, remoteQpn, ackReq, psn);
        if (Opcode.hasReth(opcode)) {
            reth.wrap(b, at + Bth.LENGTH).set(w.remoteAddress, w.rkey, w.length);
        }
        if (Opcode.hasImmediate(opcode)) {
            immDt.wrap(b, at + Opcode.immediateOffset(opcode)).value(w.immediate);
        }
        int headers = Bth.LENGTH + Opcode.extensionHeaderLength(opcode);
        int dst = at + headers;
        int sge = egress.gathers(payload) ? sgeHolding(w.sgl, offset, payload) : -1;
        if (sge >= 0) {
            // The payload stays in registered memory: the socket gathers it between header and ICRC.
            SoftMemoryRegion region = (SoftMemoryRegion) w.sgl.region(sge);
            egress.commitGathered(headers, region.memory, region.nativeAddress(),
                    w.sgl.offset(sge) + gatherSkip, payload);
            return ackReq;
        }
        gather(w.sgl, offset, b, dst, payload);
        for (int i = 0; i < pad; i++) {
            b.put(dst + payload + i, (byte) 0);
        }
        egress.commit();
        return ackReq;
    }

    /**
     * The entry of the gather list that holds message bytes [offset, offset + length) whole
     * (setting {@link #gatherSkip}), or -1 if they span entries (then they are copied).
     */
    private int sgeHolding(ScatterGatherList sgl, int offset, int length) {
        int skip = offset;
        for (int i = 0; i < sgl.count(); i++) {
            int l = sgl.length(i);
            if (skip < l) {
                if (skip + length > l || length == 0) {
                    return -1;
                }
                gatherSkip = skip;
                return i;
            }
            skip -= l;
        }
        return -1;
    }

    /** Copies message bytes [offset, offset + length) from the gather list to {@code dst}. */
    private static void gather(ScatterGatherList sgl, int offset, ByteBuffer dst, int dstAt, int length) {
        int skip = offset;
        for (int i = 0; i < sgl.count() && length > 0; i++) {
            int l = sgl.length(i);
            if (skip >= l) {
                skip -= l;
                continue;
            }
            int n = Math.min(l - skip, length);
            dst.put(dstAt, ((SoftMemoryRegion) sgl.region(i)).memory, sgl.offset(i) + skip, n);
            dstAt += n;
            length -= n;
            skip = 0;
        }
    }

    /** An ACKNOWLEDGE packet from the peer's responder. */
    void onResponse(RoceFrame frame) {
        if (frame.opcode() != Opcode.ACKNOWLEDGE) {
            counters.increment(Counter.DROP_UNEXPECTED);
            return;
        }
        int psn = frame.bth().psn();
        int syndrome = frame.aeth().syndrome();
        if (Aeth.isAck(syndrome)) {
            if (Psn.isBefore(psn, unackedPsn)) {
                return; // an older, already-superseded cumulative ACK (or a re-ACK of a duplicate)
            }
            if (!Psn.isBefore(psn, sentPsn)) {
                counters.increment(Counter.DROP_UNEXPECTED);
                return;
            }
            acknowledge(psn);
        } else if (Aeth.isRnrNak(syndrome)) {
            onRnrNak(psn, syndrome);
        } else if (syndrome == Aeth.SYNDROME_NAK_PSN_SEQUENCE_ERROR) {
            onSequenceNak(psn);
        } else if (Aeth.isNak(syndrome)) {
            if (!inFlight(psn)) {
                counters.increment(Counter.DROP_UNEXPECTED);
                return;
            }
            if (Psn.isAfter(psn, unackedPsn)) {
                acknowledge(Psn.add(psn, -1));
            }
            WcStatus status = switch (syndrome) {
                case Aeth.SYNDROME_NAK_INVALID_REQUEST -> WcStatus.REM_INV_REQ_ERR;
                case Aeth.SYNDROME_NAK_REMOTE_ACCESS_ERROR -> WcStatus.REM_ACCESS_ERR;
                default -> WcStatus.REM_OP_ERR;
            };
            qp.fail(status, String.format("peer answered PSN %d with NAK syndrome 0x%02x", psn, syndrome), compIndex);
        } else {
            counters.increment(Counter.DROP_UNEXPECTED);
        }
    }

    /** True when {@code psn} is an unacknowledged PSN that was sent. */
    private boolean inFlight(int psn) {
        return !Psn.isBefore(psn, unackedPsn) && Psn.isBefore(psn, sentPsn);
    }

    private void onSequenceNak(int psn) {
        counters.increment(Counter.NAKS_RECEIVED);
        if (!inFlight(psn)) {
            counters.increment(Counter.DROP_UNEXPECTED);
            return;
        }
        if (Psn.isAfter(psn, unackedPsn)) {
            acknowledge(Psn.add(psn, -1));
        }
        if (psn == lastNakPsn || rnrWaiting) {
            return; // the retry this NAK asks for is already under way
        }
        lastNakPsn = psn;
        naksSinceProgress++;
        if (!consumeRetry("sequence NAK at PSN " + psn)) {
            return;
        }
        rewind(psn);
        shrinkWindow();
        long now = System.nanoTime();
        deadlineNanos = now + ackTimeoutNanos;
        quietFrom(now);
        qp.markDirty();
    }

    /** A loss: the go-back-N that follows starts with a small window, which ACKs grow back. */
    private void shrinkWindow() {
        window = Math.min(WINDOW_AFTER_LOSS, maxOutstanding);
    }

    private void onRnrNak(int psn, int syndrome) {
        counters.increment(Counter.RNR_NAKS_RECEIVED);
        if (!inFlight(psn) || rnrWaiting) {
            return;
        }
        if (Psn.isAfter(psn, unackedPsn)) {
            acknowledge(Psn.add(psn, -1));
        }
        if (rnrRetry != QpAttributes.INFINITE_RETRY) {
            if (rnrRetriesLeft == 0) {
                qp.fail(WcStatus.RNR_RETRY_EXC_ERR, "peer had no receive posted for PSN " + psn + " after "
                        + rnrRetry + " RNR retries", compIndex);
                return;
            }
            rnrRetriesLeft--;
        }
        rewind(psn);
        rnrWaiting = true;
        rnrPsn = psn;
        long micros = Aeth.rnrTimerMicros(syndrome);
        if (timersPolled) {
            rnrResumeArmed = true;
            rnrResumeDueNanos = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(micros);
        } else {
            qp.eventLoop().schedule(rnrResumeTask, micros, TimeUnit.MICROSECONDS);
        }
    }

    /**
     * Where the device's drives run the timers: runs those due at {@code now}; returns when
     * the next is due (Long.MAX_VALUE if none is armed).
     */
    long runDueTimers(long now) {
        if (rnrResumeArmed && now - rnrResumeDueNanos >= 0) {
            rnrResumeArmed = false;
            onRnrResume();
        }
        if (timerArmed && now - timerDueNanos >= 0) {
            onTimer();
        }
        long due = timerArmed ? timerDueNanos : Long.MAX_VALUE;
        return rnrResumeArmed ? Math.min(due, rnrResumeDueNanos) : due;
    }

    private void onRnrResume() {
        if (!rnrWaiting) {
            return;
        }
        rnrWaiting = false;
        lastNakPsn = -1;
        if (qp.isReady()) {
            long now = System.nanoTime();
            deadlineNanos = now + ackTimeoutNanos;
            quietFrom(now);
            qp.markDirty();
            qp.endOfBatch();
        }
    }

    /** Every PSN up to and including {@code psn} arrived: retire the WQEs it covers. */
    private void acknowledge(int psn) {
        if (rnrWaiting && !Psn.isBefore(psn, rnrPsn)) {
            rnrWaiting = false; // the packet the RNR NAK named got through after all
            lastNakPsn = -1;
        }
        window = Math.min(maxOutstanding, window + Psn.diff(Psn.next(psn), unackedPsn));
        unackedPsn = Psn.next(psn);
        retriesLeft = retryCount;
        rnrRetriesLeft = rnrRetry;
        timeoutsSinceProgress = 0;
        naksSinceProgress = 0;
        long now = System.nanoTime();
        lastProgressNanos = now;
        deadlineNanos = now + ackTimeoutNanos;
        if (timing && !Psn.isBefore(psn, timedPsn)) {
            timing = false;
            long sample = now - timedSentNanos;
            srttNanos = srttNanos == 0 ? sample : srttNanos + (sample - srttNanos) / 8;
        }
        quietFrom(now);
        long posted = ring.posted();
        while (compIndex < posted) {
            SendWqe w = ring.at(compIndex);
            if (!w.started || Psn.isAfter(w.lastPsn, psn)) {
                break;
            }
            counters.increment(Counter.MESSAGES_SENT);
            if (w.signaled) {
                qp.completeSend(w.wrId, WcStatus.SUCCESS, w.opcode.isRdmaWrite() ? WcOpcode.RDMA_WRITE : WcOpcode.SEND,
                        w.length, "");
            }
            compIndex++;
        }
        ring.retire(compIndex);
        if (Psn.isAfter(unackedPsn, reqPsn)) {
            rewind(unackedPsn); // a rewound requester skips what the peer already has
        }
        qp.markDirty();
    }

    /** Go-back-N: the next packet sent is {@code psn}, with its original WQE and offset. */
    private void rewind(int psn) {
        timing = false; // an ACK after a resend cannot tell which copy it answers
        reqPsn = psn;
        reqIndex = compIndex;
        reqPacket = 0;
        packetsSinceAckReq = 0;
        long posted = ring.posted();
        while (reqIndex < posted) {
            SendWqe w = ring.at(reqIndex);
            if (!w.started) {
                break;
            }
            if (!Psn.isAfter(psn, w.lastPsn)) {
                reqPacket = Psn.diff(psn, w.firstPsn);
                break;
            }
            reqIndex++;
        }
    }

    private boolean consumeRetry(String why) {
        counters.increment(Counter.RETRY_SEQUENCES);
        if (retriesLeft == 0) {
            qp.fail(WcStatus.RETRY_EXC_ERR, "no acknowledgement from the peer after " + retryCount + " retries (last: "
                    + why + "; " + timeoutsSinceProgress + " ACK timeouts and " + naksSinceProgress
                    + " sequence NAKs in the " + (System.nanoTime() - lastProgressNanos) / 1_000_000
                    + " ms since the peer last acknowledged anything new; PSNs unacknowledged " + unackedPsn
                    + " .. " + Psn.add(sentPsn, -1) + ")", compIndex);
            return false;
        }
        retriesLeft--;
        return true;
    }

    /**
     * Schedules the timer for the tail probe or the ACK timeout, whichever is due first; a
     * timer already set for later is cancelled (the timer checks what is due when it runs).
     */
    private void armTimer() {
        if (!outstanding() || !qp.isReady()) {
            return;
        }
        long due = probeDue() && probeDeadlineNanos - deadlineNanos < 0 ? probeDeadlineNanos : deadlineNanos;
        if (timerArmed) {
            if (due - timerDueNanos >= 0) {
                return;
            }
            if (timer != null) {
                timer.cancel(false);
            }
        }
        timerArmed = true;
        timerDueNanos = due;
        if (!timersPolled) {
            timer = qp.eventLoop().schedule(timerTask, Math.max(0, due - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
    }

    private void onTimer() {
        timer = null;
        timerArmed = false;
        if (!qp.isReady() || !outstanding()) {
            return;
        }
        if (rnrWaiting) {
            deadlineNanos = System.nanoTime() + ackTimeoutNanos;
            armTimer();
            return;
        }
        long now = System.nanoTime();
        if (now - deadlineNanos < 0) {
            if (probeDue() && now - probeDeadlineNanos >= 0) {
                probe(probes % 2 == 0 ? Psn.add(reqPsn, -1) : unackedPsn);
                probes++;
                probeDeadlineNanos = now + (probeTimeout() << Math.min(probes, 20));
            }
            armTimer();
            return;
        }
        counters.increment(Counter.ACK_TIMEOUTS);
        timeoutsSinceProgress++;
        if (!consumeRetry("ACK timeout at PSN " + unackedPsn)) {
            return;
        }
        if (LOG.isDebugEnabled()) {
            LOG.debug("QP {}: ACK timeout at PSN {} (sent up to {}, {} probes unanswered)", qp.qpn(), unackedPsn,
                    Psn.add(sentPsn, -1), probes);
        }
        lastNakPsn = -1;
        rewind(unackedPsn);
        shrinkWindow();
        deadlineNanos = now + ackTimeoutNanos;
        quietFrom(now);
        qp.markDirty();
        qp.endOfBatch();
    }

    /**
     * Whether probes are on and one could go now: no RNR wait, and nothing more may be sent
     * until an answer comes (all is sent, or a go-back-N resend filled the window, which
     * after a loss is smaller than what was in flight: a lost last packet of that resend
     * leaves the responder nothing to NAK).
     */
    private boolean probeDue() {
        return tailProbeNanos > 0 && !rnrWaiting && (reqPsn == sentPsn || Psn.diff(reqPsn, unackedPsn) >= window);
    }

    /** Sends unacknowledged packet {@code psn} again, asking for an ACK, without rewinding (see the class comment). */
    private void probe(int psn) {
        long posted = ring.posted();
        for (long i = compIndex; i < posted; i++) {
            SendWqe w = ring.at(i);
            if (!w.started) {
                break;
            }
            if (!Psn.isAfter(psn, w.lastPsn)) {
                counters.increment(Counter.TAIL_PROBES);
                sendPacket(w, Psn.diff(psn, w.firstPsn), psn, true);
                qp.markDirty();
                qp.endOfBatch();
                return;
            }
        }
    }

    /** Oldest WQE not yet completed, for flushing. */
    long compIndex() {
        return compIndex;
    }

    /** The QP is in error: every WQE from the oldest outstanding one on is flushed by the caller. */
    void retireAll(long index) {
        compIndex = index;
        reqIndex = index;
        reqPacket = 0;
        ring.retire(index);
    }

    /** Whether a posted-but-unfinished WQE exists (for tests and close). */
    boolean idle() {
        return compIndex == ring.posted();
    }

    int unackedPsn() {
        return unackedPsn;
    }
}
