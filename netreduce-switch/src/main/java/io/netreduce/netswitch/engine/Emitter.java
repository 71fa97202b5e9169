package io.netreduce.netswitch.engine;

import io.netreduce.wire.roce.Aeth;
import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.roce.IcrcTemplate;
import io.netreduce.wire.roce.Opcode;

import io.netreduce.wire.ina.InaHeader;
import io.netreduce.wire.roce.Icrc;

import java.nio.ByteBuffer;

/**
 * Writes the datagrams the engine sends into the caller's {@link OutputBatch}: unchanged
 * forwards, result packets built from a connection's own headers (the INA header of a
 * message's first packet marked as a result), the stored sum and a recomputed ICRC over
 * that connection's canonical header, call-mismatch notices, and RNR NAKs on behalf of a
 * receiver. Owned by the datapath thread.
 */
final class Emitter {
    private final IcrcTemplate icrc = new IcrcTemplate();
    private final Bth bth = new Bth();
    private final Aeth aeth = new Aeth();
    private final SwitchCounters counters;
    private OutputBatch out;
    private ByteBuffer in;
    private int inOffset;
    private int inLength;

    Emitter(SwitchCounters counters) {
        this.counters = counters;
    }

    void begin(OutputBatch batch, ByteBuffer datagram, int offset, int length) {
        out = batch;
        in = datagram;
        inOffset = offset;
        inLength = length;
    }

    void drop(DropReason reason) {
        counters.drop(reason);
    }

    void count(SwitchCounters.Counter c) {
        counters.increment(c);
    }

    void add(SwitchCounters.Counter c, long n) {
        counters.add(c, n);
    }

    /** True if the batch can take {@code n} more datagrams; counts an OUTPUT_FULL drop if not. */
    boolean reserve(int n) {
        if (!out.makeRoom(n)) {
            counters.drop(DropReason.OUTPUT_FULL);
            return false;
        }
        return true;
    }

    /** True if the batch can take {@code n} more datagrams (an optional emission: nothing is counted). */
    boolean hasRoom(int n) {
        return out.makeRoom(n);
    }

    /** Sends the current datagram on unchanged; its ICRC stays valid (same canonical header). */
    void forwardUnchanged(Route route) {
        if (!reserve(1)) {
            return;
        }
        ByteBuffer b = out.next();
        b.put(0, in, inOffset, inLength);
        commit(route, inLength);
    }

    /**
     * A result packet with headers taken from {@code headers[headerAt, +headerLength)}. In a
     * message's first packet ({@code contributions > 0}) the headers end with that
     * connection's INA header, which is marked as a result of {@code contributions} ranks.
     * With {@code askForAck} the packet also asks for an ACK: a receiver that already has it
     * re-ACKs with the PSN it expects, one that lacks it takes it and ACKs.
     */
    void emitStored(Route route, byte[] headers, int headerAt, int headerLength, LaneStore sums, int sumAt,
                    int sumLength, int sumCrc, int contributions, boolean askForAck) {
        ByteBuffer b = out.next();
        b.put(0, headers, headerAt, headerLength);
        if (askForAck) {
            bth.wrap(b, 0).ackRequest(true);
        }
        finishResult(route, b, headerLength, sums, sumAt, sumLength, sumCrc, contributions);
    }

    /**
     * The CRC-32 of a sum's {@code sumLength} bytes at {@code sumAt}: taken once for the
     * result packets of every connection, whose ICRCs then read only their own headers.
     */
    int sumCrc(LaneStore sums, int sumAt, int sumLength) {
        return icrc.payloadCrc(sums.results(), sumAt, sumLength);
    }

    /** A result packet with the current datagram's own first {@code headerLength} bytes as headers (marked as above). */
    void emitWithIncomingHeaders(Route route, int headerLength, LaneStore sums, int sumAt, int sumLength,
                                 int contributions) {
        ByteBuffer b = out.next();
        b.put(0, in, inOffset, headerLength);
        finishResult(route, b, headerLength, sums, sumAt, sumLength, sumCrc(sums, sumAt, sumLength), contributions);
    }

    /**
     * Completes a result packet whose headers are in {@code b}: the sum follows them, copied
     * in, or where the batch {@link OutputBatch#gathers() gathers}, left in the lane store
     * and named by address, with the ICRC (right after the headers when gathered, else at
     * the end) from the headers and the sum's CRC-32, {@code sumCrc}.
     */
    private void finishResult(Route route, ByteBuffer b, int headerLength, LaneStore sums, int sumAt, int sumLength,
                              int sumCrc, int contributions) {
        if (contributions > 0) {
            // The mark is what lets every host tell a complete aggregate from a packet that went around the switch.
            InaHeader.markResult(b, headerLength - InaHeader.LENGTH, contributions);
        }
        int length = headerLength + sumLength + Icrc.LENGTH;
        int value = icrc.computeGathered(route.icrcTemplate, b, 0, headerLength, sumCrc, sumLength);
        if (out.gathers()) {
            Icrc.store(b, headerLength, value);
            out.commitGathered(route.forwardIp, route.forwardPort, length, headerLength, sums.results(), sumAt,
                    sumLength);
            counters.increment(SwitchCounters.Counter.PACKETS_OUT);
            return;
        }
        b.put(headerLength, sums.results(), sumAt, sumLength);
        Icrc.store(b, headerLength + sumLength, value);
        commit(route, length);
    }

    /** Sends what the batch holds that names results in place, before results change (a slot is reused). */
    void releaseResultReferences() {
        out.releaseReferences();
    }

    /**
     * The current datagram, a message's first packet, passed on with its INA header marked
     * as a call-mismatch notice (its own payload, meaningless to the receiver).
     */
    void emitCallMismatch(Route route, int inaAt) {
        if (!reserve(1)) {
            return;
        }
        ByteBuffer b = out.next();
        b.put(0, in, inOffset, inLength);
        InaHeader.markCallMismatch(b, inaAt);
        finish(route, b, inLength);
    }

    /**
     * An RNR NAK for {@code psn} on an ACK route, as the receiver's responder would send one
     * (its last MSN, a timer of {@code timerCode}): the sender waits and sends again, with no
     * retry counted against its ACK timeout budget.
     */
    void emitRnrNak(Route ackRoute, int psn, int msn, int timerCode) {
        if (emitAcknowledge(ackRoute, Aeth.rnrNak(timerCode), psn, msn)) {
            counters.increment(SwitchCounters.Counter.RNR_NAKS_SENT);
        }
    }

    /**
     * A sequence NAK for {@code psn} on an ACK route, as the receiver's responder sends one on
     * a gap (its last MSN {@code msn}): the sender goes back N from {@code psn}.
     */
    void emitSequenceNak(Route ackRoute, int psn, int msn) {
        if (emitAcknowledge(ackRoute, Aeth.SYNDROME_NAK_PSN_SEQUENCE_ERROR, psn, msn)) {
            counters.increment(SwitchCounters.Counter.PROBES_ANSWERED_WITH_NAK);
        }
    }

    /**
     * A plain ACK of every PSN up to {@code psn} on an ACK route, as the receiver's responder
     * would send one (its MSN {@code msn}), in place of the current datagram.
     */
    void emitAckInstead(Route ackRoute, int psn, int msn) {
        emitAcknowledge(ackRoute, Aeth.SYNDROME_ACK, psn, msn);
    }

    private boolean emitAcknowledge(Route ackRoute, int syndrome, int psn, int msn) {
        if (!reserve(1)) {
            return false;
        }
        ByteBuffer b = out.next();
        bth.wrap(b, 0).set(Opcode.ACKNOWLEDGE, false, 0, ackRoute.connection.srcQpn(), false, psn);
        aeth.wrap(b, Bth.LENGTH).set(syndrome, msn);
        finish(ackRoute, b, Bth.LENGTH + Aeth.LENGTH + Icrc.LENGTH);
        return true;
    }

    private void finish(Route route, ByteBuffer b, int length) {
        icrc.write(route.icrcTemplate, b, 0, length);
        commit(route, length);
    }

    private void commit(Route route, int length) {
        out.commit(route.forwardIp, route.forwardPort, length);
        counters.increment(SwitchCounters.Counter.PACKETS_OUT);
    }

    boolean verifyIcrc(Route route) {
        return icrc.verify(route.icrcTemplate, in, inOffset, inLength);
    }
}
