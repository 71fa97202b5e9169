package io.netreduce.netswitch.engine;

import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.ina.InaHeader;
import io.netreduce.wire.roce.Opcode;
import io.netreduce.wire.roce.Psn;
import io.netreduce.wire.roce.RoceFrame;

import java.nio.ByteBuffer;

/**
 * One ring's aggregator array and its connections' lookup entries (docs/switch.md, "Datapath rules, as built").
 *
 * <p>Memory is allocated once, at creation: 2N message slots (slot = msgId mod 2N); per slot
 * and packet position a rank bitmap, P rank buffers and a result buffer of MTU bytes, and
 * each rank's headers. Per rank connection and slot the CLT records the message and its first
 * PSN, so a later packet finds its message and packet index from its connection and PSN alone.
 *
 * <p>Rules, in the order {@link #onSend} applies them:
 * <ul>
 *   <li>A first packet (SEND First/Only) carries the INA header; it must name this ring, the
 *       connection's rank, the ring's dtype and a payload length the ring allows, and carry no
 *       flags (a marked header is a result coming round again).</li>
 *   <li>Its msgId m claims slot m mod 2N; the claim retires the message that held the slot
 *       (m - 2N), which the host protocol proves every rank has received. A message at or
 *       below the newest minus 2N is already retired: forwarded unchanged, the receiver
 *       treats it as a duplicate and re-ACKs.</li>
 *   <li>A later packet outside every live message of its connection is either older than
 *       the retired boundary (stale: forwarded unchanged) or belongs to a message whose first
 *       packet was lost (dropped: go-back-N resends it).</li>
 *   <li>The first copy of each rank's packet counts: a duplicate before completion is not read
 *       again (an RC sender resends the bytes it sent, as ibverbs forbids changing a send
 *       buffer before its work request completes, which is after the result arrives). The
 *       lanes are summed in rank order into the result ({@link LaneStore}: added as they
 *       arrive in rank order, or at completion), which stays immutable from completion
 *       until the slot is reused; one packet per connection leaves with that
 *       connection's own headers, its INA header marked as a result of P contributions. A retransmission of a completed packet re-emits the stored
 *       result on its own connection only and never reads its payload; if the receiver has
 *       already acknowledged its PSN, the switch answers an AckReq with the receiver's last
 *       ACK instead and sends nothing else (after a loss, the lost packet's go-back-N
 *       resends results every receiver already has).</li>
 *   <li>Results leave in the ring's order. Of those that complete while an earlier packet
 *       is still missing, the first goes out at once (its receivers NAK the gap), the rest
 *       are held (receivers would drop them as out of sequence); right after the missing
 *       packet completes, all of them go out in order, so other ranks do not wait for their
 *       ACK timeouts. Where those in-order sends stop at another missing packet, the first
 *       held result past it goes out at once, as the first past the first gap did, unless
 *       only the rank whose resend completed the packet before lacks it.</li>
 *   <li>A sender's tail probe (a packet held here, sent again with AckReq) while its packet
 *       at the PSN its receiver expects next is missing here is answered with the sequence
 *       NAK that receiver would send ({@link #answerProbe}); where the receiver's last ACK
 *       names a result already sent, the switch first asks it for a fresh ACK
 *       ({@link #answerAwaitedProbe}).</li>
 *   <li>Every rank's first packet of a message must carry the same call digest as the first
 *       one the slot saw; otherwise the message is never summed and every rank's packets of
 *       it go on to their receivers, the first one marked as a call-mismatch notice.</li>
 *   <li>A receiver's sequence NAK for a PSN whose packet the switch holds from that
 *       receiver's sender while the sum waits for another rank goes on as an ACK of the
 *       PSNs before it: the previous rule delivers the packet, and no sender whose packet
 *       arrived goes back N for another rank's loss ({@link #absorbNak}).</li>
 *   <li>A retransmitted first packet of a message that has waited at least
 *       {@link #LATE_RANK_AFTER_NANOS} for other ranks, whose PSN is the one its receiver
 *       expects next (known from the receiver's ACKs on their way back), is answered with an
 *       RNR NAK on the receiver's behalf: its sender waits and sends again instead of running
 *       out of retries while a rank is late.</li>
 * </ul>
 * Only the datapath thread calls {@link #onSend}; the control plane reads the progress
 * fields for display only.
 */
final class Ring {
    final RingConfig config;
    final int ringId;
    private final int ranks;
    private final int slots;
    private final int window;
    private final int maxPackets;
    private final int mtu;
    private final boolean fp32;
    private final long fullMask;
    /**
     * The RNR timer of the switch's NAKs to a sender whose message waits for a late rank:
     * code 20, 10.24 ms. Long enough that a sender waiting for a rank that computes for
     * seconds resends its window only about 100 times a second; short enough that once the
     * late rank's packets complete the sums (the sender's stored packets need no resending)
     * the sender's next messages leave within about 10 ms.
     */
    static final int LATE_RANK_RNR_TIMER = 20;
    /**
     * How long a message must have waited for a late rank before a retransmitted first packet
     * of it is answered with an RNR NAK ({@link io.netreduce.wire.ina.LateRank}).
     * A sender's ACK-timeout retransmissions come later than that; its tail probes, which come
     * after a millisecond or so and spend no retry, are only stored (they need no answer, and an
     * RNR NAK would make the sender resend its window when the wait ends).
     */
    static final long LATE_RANK_AFTER_NANOS = io.netreduce.wire.ina.LateRank.ANSWER_AFTER_NANOS;
    /** How far (in PSNs) behind the retired boundary a packet still counts as a stale duplicate. */
    private final int staleSpan;

    /** Data routes by rank, set when connections register, and the ACK routes back to each rank. */
    final Route[] dataRoutes;
    final Route[] ackRoutes;

    private final int[] slotMsg;
    /** The call digest of the slot's message (its first rank's), and whether another rank's differed. */
    private final int[] slotCall;
    private final boolean[] slotMismatch;
    /** Per rank connection: the receiver's last ACK seen on its way back (PSN and MSN), if any. */
    private final boolean[] ackSeen;
    private final int[] ackedPsn;
    private final int[] ackMsn;
    private final boolean[] slotActive;
    private final int[] slotDataLength;
    private final int[] slotPackets;
    private final int[] slotDone;
    /** When each slot's message claimed it (System.nanoTime), to tell a late rank from a short wait. */
    private final long[] slotClaimedNanos;
    private final long[] bitmap;
    private final boolean[] complete;
    /** Rank buffers while a packet position collects, and every position's sum ({@code (slot * maxPackets + j) * mtu}). */
    private final LaneStore lanes;
    private final byte[][] headers;

    private final boolean[] cltValid;
    private final int[] cltMsg;
    private final int[] cltFirstPsn;
    private final boolean[] retired;
    private final int[] retiredEnd;

    private final InaHeader ina = new InaHeader();

    private boolean started;
    private int newestMsg;
    /** The oldest result not yet sent in order: message and packet ({@link #emitInOrder}). */
    private int frontierMsg;
    private int frontierPacket;
    /** A result past {@link #frontierPacket} went out since it became the in-order point. */
    private boolean pastFrontierSent;
    /** Per packet position, when its result was sent in order (System.nanoTime; 0: not yet). */
    private final long[] sentInOrder;
    /** Per rank connection: when its receiver's last NAK (sequence or RNR) went on to the sender. */
    private final long[] lastNakAt;
    /**
     * Per rank connection: a tail probe (its PSN) that {@link #answerProbe} could not judge,
     * because the receiver's last ACK seen here names a PSN whose result was already sent:
     * the receiver may hold more than that ACK says. The switch asked the receiver for an
     * ACK, and its next one settles the probe ({@link #answerAwaitedProbe}).
     */
    private final boolean[] probeAwaitsAck;
    private final int[] awaitedProbePsn;
    /** Per rank connection: when its receiver's last ACK or NAK passed here (System.nanoTime). */
    private final long[] lastAnswerAt;
    /**
     * How long a receiver must have been silent before a probe behind its last ACK makes the
     * switch ask it for a fresh one. Go-back-N resends ask for ACKs too (every 64th packet,
     * each message's last) while the receiver's ACKs of what it got are still on their way;
     * a sender's tail probe comes after a quiet spell of at least its floor (10 ms by default).
     * Half that floor: at P = 4 and 0.1 % loss, 1 ms still asked about 150 times per run of
     * 10 calls, mostly for resends; 5 ms about 10.
     */
    static final long RECEIVER_QUIET_NANOS = 5_000_000L;
    /**
     * How long after a result was sent in order a go-back-N resend of its packet is not
     * answered with it again: long enough for the burst that follows the lost packet, far
     * shorter than any sender's retransmission timer, so a result that did get lost is sent
     * again at the sender's next try.
     */
    static final long RESEND_SKIP_NANOS = 1_000_000L;
    private final long resendSkipNanos;
    private long messagesCompleted;
    private long aggregationsCompleted;

    Ring(RingConfig config, long resendSkipNanos) {
        this.config = config;
        this.resendSkipNanos = resendSkipNanos;
        this.ringId = config.ringId();
        this.ranks = config.ranks();
        this.slots = config.slots();
        this.window = config.window();
        this.maxPackets = config.packetsPerMessage();
        this.mtu = config.mtu();
        this.fp32 = config.dtype() == InaHeader.DTYPE_FP32;
        this.fullMask = ranks == 64 ? -1L : (1L << ranks) - 1;
        this.staleSpan = Math.max(1024, 2 * slots * maxPackets);
        dataRoutes = new Route[ranks];
        ackRoutes = new Route[ranks];
        slotCall = new int[slots];
        slotMismatch = new boolean[slots];
        ackSeen = new boolean[ranks];
        ackedPsn = new int[ranks];
        ackMsn = new int[ranks];
        slotMsg = new int[slots];
        slotActive = new boolean[slots];
        slotDataLength = new int[slots];
        slotPackets = new int[slots];
        slotDone = new int[slots];
        slotClaimedNanos = new long[slots];
        bitmap = new long[slots * maxPackets];
        complete = new boolean[slots * maxPackets];
        sentInOrder = new long[slots * maxPackets];
        lastNakAt = new long[ranks];
        probeAwaitsAck = new boolean[ranks];
        awaitedProbePsn = new int[ranks];
        lastAnswerAt = new long[ranks];
        int resultBytes = slots * maxPackets * mtu;
        int positions = slots * maxPackets;
        lanes = LaneStore.create(fp32, positions, ranks, mtu, config.byteOrder(), resultBytes);
        headers = new byte[slots][maxPackets * ranks * RingConfig.HEADER_CAPACITY];
        cltValid = new boolean[ranks * slots];
        cltMsg = new int[ranks * slots];
        cltFirstPsn = new int[ranks * slots];
        retired = new boolean[ranks];
        retiredEnd = new int[ranks];
    }

    /** See {@link AggregationEngine#receiveArea}. */
    void sourceArea(ByteBuffer area) {
        lanes.sourceArea(area);
    }

    /** Where the sum of packet j of slot s lies in the lane store's results. */
    private int resultAt(int s, int j) {
        return (s * maxPackets + j) * mtu;
    }

    private int headerAt(int j, int rank) {
        return (j * ranks + rank) * RingConfig.HEADER_CAPACITY;
    }

    private static int headerLength(int opcode, int j) {
        return Bth.LENGTH + Opcode.extensionHeaderLength(opcode) + (j == 0 ? InaHeader.LENGTH : 0);
    }

    private int lanesLength(int s, int j) {
        int packets = slotPackets[s];
        int packetData = j < packets - 1 ? mtu : slotDataLength[s] - (packets - 1) * mtu;
        return j == 0 ? packetData - InaHeader.LENGTH : packetData;
    }

    /** True if opcode and payload length fit position j of a message of {@code dataLength} bytes. */
    private boolean positionFits(int opcode, int j, int packets, int payloadLength, int dataLength) {
        boolean only = opcode == Opcode.SEND_ONLY || opcode == Opcode.SEND_ONLY_WITH_IMMEDIATE;
        boolean last = opcode == Opcode.SEND_LAST || opcode == Opcode.SEND_LAST_WITH_IMMEDIATE;
        if (packets == 1) {
            return only && payloadLength == dataLength;
        }
        if (j == 0) {
            return opcode == Opcode.SEND_FIRST && payloadLength == mtu;
        }
        if (j < packets - 1) {
            return opcode == Opcode.SEND_MIDDLE && payloadLength == mtu;
        }
        return last && payloadLength == dataLength - (packets - 1) * mtu;
    }

    /** Handles one well-formed SEND packet that arrived on rank {@code route.rank}'s connection. */
    void onSend(Route route, RoceFrame frame, Emitter em) {
        final int rank = route.rank;
        final ByteBuffer buf = frame.buffer();
        final int opcode = frame.opcode();
        final int psn = frame.bth().psn();
        final int payloadOffset = frame.payloadOffset();
        final int payloadLength = frame.payloadLength();
        if (frame.bth().padCount() != 0) {
            em.drop(DropReason.BAD_PAD);
            return;
        }
        int s;
        int j;
        if (Opcode.isStart(opcode)) {
            if (payloadLength < InaHeader.LENGTH) {
                em.drop(DropReason.BAD_INA_HEADER);
                return;
            }
            ina.wrap(buf, payloadOffset);
            if (ina.version() != InaHeader.VERSION || ina.dtype() != config.dtype() || ina.flags() != 0) {
                // A host never sends a marked header: one is a result that came back around to the switch.
                em.drop(DropReason.BAD_INA_HEADER);
                return;
            }
            if (ina.ringId() != ringId) {
                em.drop(DropReason.INA_RING_MISMATCH);
                return;
            }
            if (ina.rank() != rank) {
                em.drop(DropReason.INA_RANK_MISMATCH);
                return;
            }
            int length = ina.payloadLength();
            if (length <= 0 || length > config.messagePayloadLength() || (length & 3) != 0) {
                em.drop(DropReason.INA_LENGTH_MISMATCH);
                return;
            }
            final int msg = ina.msgId();
            final int dataLength = InaHeader.LENGTH + length;
            final int packets = (dataLength + mtu - 1) / mtu;
            if (!positionFits(opcode, 0, packets, payloadLength, dataLength)) {
                em.drop(DropReason.BAD_PACKET_LENGTH);
                return;
            }
            if (started) {
                int ahead = msg - newestMsg;
                if (ahead <= -slots) {
                    // Retired: every rank has this message's result, the receiver re-ACKs it.
                    stale(route, em);
                    return;
                }
                if (ahead > window) {
                    em.drop(DropReason.MSG_OUT_OF_WINDOW);
                    return;
                }
            }
            s = Integer.remainderUnsigned(msg, slots);
            if (slotActive[s] && slotMsg[s] == msg) {
                if (slotDataLength[s] != dataLength) {
                    em.drop(DropReason.INA_LENGTH_MISMATCH);
                    return;
                }
                if (ina.call() != slotCall[s]) {
                    slotMismatch[s] = true;
                }
            } else {
                if (slotActive[s] && (msg - slotMsg[s] < 0 || slotDone[s] < slotPackets[s])) {
                    // The host window forbids this: the slot's message is unfinished or newer.
                    em.drop(DropReason.MSG_OUT_OF_WINDOW);
                    return;
                }
                claim(s, msg, dataLength, packets, em);
                slotCall[s] = ina.call();
            }
            int e = rank * slots + s;
            if (cltValid[e]) {
                if (cltFirstPsn[e] != psn) {
                    em.drop(DropReason.INCONSISTENT_PSN);
                    return;
                }
            } else {
                cltValid[e] = true;
                cltMsg[e] = msg;
                cltFirstPsn[e] = psn;
            }
            j = 0;
            if (slotMismatch[s]) {
                // Never summed: every rank's first packet goes on to its receiver marked, so
                // that each host fails the call at once instead of waiting for a sum.
                em.count(SwitchCounters.Counter.CALL_MISMATCHES);
                em.emitCallMismatch(route, payloadOffset - frame.offset());
                return;
            }
        } else {
            s = slotOf(rank, psn);
            if (s < 0) {
                missed(route, psn, frame.bth().ackRequest(), em);
                return;
            }
            j = Psn.diff(psn, cltFirstPsn[rank * slots + s]);
            if (!positionFits(opcode, j, slotPackets[s], payloadLength, slotDataLength[s])) {
                em.drop(DropReason.BAD_PACKET_LENGTH);
                return;
            }
            if (slotMismatch[s]) {
                em.forwardUnchanged(route); // the rest of a mismatch notice, the sender's own data
                return;
            }
        }

        final int pk = s * maxPackets + j;
        final int hdrLength = headerLength(opcode, j);
        final int laneBytes = lanesLength(s, j);
        if (complete[pk]) {
            if (ackSeen[rank] && !Psn.isAfter(psn, ackedPsn[rank])) {
                // The receiver has acknowledged this PSN (its ACK came through here): the result
                // again would only be dropped as a duplicate and re-ACKed. Answer as it would.
                em.count(SwitchCounters.Counter.ACKED_RETRANSMISSIONS);
                if (frame.bth().ackRequest()) {
                    em.emitAckInstead(ackRoutes[rank], ackedPsn[rank], ackMsn[rank]);
                }
                return;
            }
            if (frame.bth().ackRequest() && ackSeen[rank] && answerProbe(rank, psn, em)) {
                return; // its result would reach the receiver past the gap, of no use
            }
            long sent = sentInOrder[pk];
            if (sent != 0 && !frame.bth().ackRequest() && sent - lastNakAt[rank] > 0
                    && System.nanoTime() - sent < resendSkipNanos) {
                // Sent to every receiver in order moments ago, and this one has not NAKed
                // since: a go-back-N resend right behind the lost packet whose completion sent
                // it. Again it would only be dropped as a duplicate. A receiver that lost it
                // NAKs the gap, a sender that hears nothing probes (asking for an ACK) or
                // times out (later than the skip lasts), and then it is sent again.
                em.count(SwitchCounters.Counter.RETRANSMISSIONS_ALREADY_SENT);
                return;
            }
            if (em.reserve(1)) {
                em.count(SwitchCounters.Counter.RETRANSMITTED_RESULTS);
                em.emitWithIncomingHeaders(route, hdrLength, lanes, resultAt(s, j), laneBytes, j == 0 ? ranks : 0);
            }
            return;
        }
        long bit = 1L << rank;
        boolean duplicate = (bitmap[pk] & bit) != 0;
        if (duplicate) {
            em.count(SwitchCounters.Counter.DUPLICATES);
            if (j == 0 && ackSeen[rank] && psn == Psn.next(ackedPsn[rank])
                    && System.nanoTime() - slotClaimedNanos[s] >= LATE_RANK_AFTER_NANOS) {
                // The sender's ACK timer ran out while other ranks have not sent this message
                // yet (one of them is late): answer as the receiver would if it had no buffer,
                // so the sender waits instead of spending its retries (see the class comment).
                em.emitRnrNak(ackRoutes[rank], psn, ackMsn[rank], LATE_RANK_RNR_TIMER);
            } else if (frame.bth().ackRequest() && ackSeen[rank] && !answerProbe(rank, psn, em)) {
                askForAckIfProbeAwaits(rank, em);
            }
        }
        // A duplicate's headers replace the stored ones (a tail probe's AckReq goes on with the
        // result), its payload is not read again: it is the one the rank sent first.
        buf.get(frame.offset(), headers[s], headerAt(j, rank), hdrLength);
        if (!duplicate && lanes.store(pk, rank, buf, frame.offset() + hdrLength, laneBytes, resultAt(s, j))) {
            em.count(SwitchCounters.Counter.CONTRIBUTIONS_BUFFERED);
        }
        long bits = bitmap[pk] | bit;
        bitmap[pk] = bits;
        if (bits == fullMask) {
            completePacket(s, j, pk, laneBytes, rank, em);
        }
    }

    /**
     * An ACK on its way from rank {@code rank}'s receiver back to it: the receiver has every
     * PSN up to {@code psn}, so the next one it expects is {@code psn + 1}. Only that PSN
     * may be answered with an RNR NAK on the receiver's behalf: a NAK also acknowledges every
     * PSN before it.
     */
    void onAck(int rank, int psn, int msn) {
        lastAnswerAt[rank] = System.nanoTime();
        if (!ackSeen[rank] || Psn.isAfter(psn, ackedPsn[rank])) {
            ackSeen[rank] = true;
            ackedPsn[rank] = psn;
            ackMsn[rank] = msn;
        }
    }

    /**
     * An RNR NAK on its way from rank {@code rank}'s receiver back to it: the receiver had no
     * receive posted for a result, dropped it and drops every later one until the sender's
     * resend after its RNR wait. That resend may come within the resend skip of the results'
     * in-order send, so it must be answered with them like one after a sequence NAK.
     */
    void onRnrNak(int rank) {
        lastNakAt[rank] = System.nanoTime();
        lastAnswerAt[rank] = lastNakAt[rank];
    }

    /**
     * A sequence NAK from rank {@code route.rank}'s receiver, which expects {@code psn}. If
     * the switch holds that rank's packet at {@code psn} and the sum waits for another rank's,
     * the sender's go-back-N would only resend what is stored: the switch sends the result,
     * and the results after it in order ({@link #emitInOrder}), once the sum completes.
     * So the NAK goes on as the ACK of everything before {@code psn} that it also is, and no
     * sender but the one whose packet was lost resends its window (without this, one rank's
     * loss made every rank go back N). Returns false when the NAK must go on unchanged: the
     * rank's packet is missing here, or the result was sent and lost on the way.
     */
    boolean absorbNak(Route route, int psn, int msn, Emitter em) {
        int rank = route.rank;
        probeAwaitsAck[rank] = false; // the receiver said what it expects
        // A NAK acknowledges every PSN before it: the probes that follow are judged from there.
        int acked = Psn.add(psn, -1);
        onAck(rank, acked, msn);
        int s = slotOf(rank, psn);
        int pk = s < 0 ? -1 : s * maxPackets + Psn.diff(psn, cltFirstPsn[rank * slots + s]);
        if (pk < 0 || complete[pk] || (bitmap[pk] & (1L << rank)) == 0 || slotMismatch[s]) {
            lastNakAt[rank] = System.nanoTime(); // what was sent before this NAK may not have arrived
            return false;
        }
        em.count(SwitchCounters.Counter.NAKS_ABSORBED);
        em.emitAckInstead(route, acked, msn);
        return true;
    }

    /**
     * A packet of rank {@code rank} the switch already holds (or has summed) came again
     * asking for an ACK: a tail probe, sent after a quiet spell. If the packet the receiver
     * expects next (the one after its last ACK) is missing here, that is why the spell is
     * quiet: no result can complete, so the receiver sees no gap to NAK, and the sender's
     * probes would first resend its newest packets. The switch answers as the receiver would if the probe reached it,
     * with a sequence NAK for that PSN, and the sender goes back N at once. Only that PSN: a
     * NAK also acknowledges every PSN before it, and the receiver has acknowledged exactly
     * those. True if it answered.
     */
    private boolean answerProbe(int rank, int psn, Emitter em) {
        int expected = Psn.next(ackedPsn[rank]);
        if (!Psn.isAfter(psn, expected)) {
            return false;
        }
        int s = slotOf(rank, expected);
        if (s >= 0) {
            int pk = s * maxPackets + Psn.diff(expected, cltFirstPsn[rank * slots + s]);
            if (complete[pk]) {
                // Summed and sent: the receiver may well hold it and more, its ACK of them
                // coalesced or still to come. If it has been silent, only a fresh ACK tells
                // what it expects.
                if (System.nanoTime() - lastAnswerAt[rank] >= RECEIVER_QUIET_NANOS) {
                    probeAwaitsAck[rank] = true;
                    awaitedProbePsn[rank] = psn;
                }
                return false;
            }
            if ((bitmap[pk] & (1L << rank)) != 0 || slotMismatch[s]) {
                return false; // held here: the receiver's own NAKs and the in-order sends cover it
            }
        } else if (retired[rank] && Psn.isBefore(expected, retiredEnd[rank])) {
            return false; // every rank has that message's result; the receiver's ACK of it was lost
        }
        // Missing here (this rank's packet at that PSN never arrived, or no live message of
        // the connection holds it: the first packet of a message before the probe's was
        // lost), so no result for it left and the receiver cannot have it.
        probeAwaitsAck[rank] = false;
        em.emitSequenceNak(ackRoutes[rank], expected, ackMsn[rank]);
        return true;
    }

    /**
     * After a probe {@link #answerProbe} could not judge and nothing else goes to the
     * receiver for it: the result at the PSN the receiver was last known to expect goes to
     * it again, asking for an ACK. A receiver that has it re-ACKs with the PSN it really
     * expects; one that lacks it takes it and ACKs. Either answer settles the probe.
     */
    private void askForAckIfProbeAwaits(int rank, Emitter em) {
        if (!probeAwaitsAck[rank]) {
            return;
        }
        int expected = Psn.next(ackedPsn[rank]);
        int s = slotOf(rank, expected);
        if (s < 0) {
            return;
        }
        int j = Psn.diff(expected, cltFirstPsn[rank * slots + s]);
        if (!complete[s * maxPackets + j] || !em.reserve(1)) {
            return;
        }
        int at = headerAt(j, rank);
        em.count(SwitchCounters.Counter.ACKS_ASKED);
        int sumAt = resultAt(s, j);
        int sumLength = lanesLength(s, j);
        em.emitStored(dataRoutes[rank], headers[s], at, headerLength(headers[s][at] & 0xFF, j), lanes, sumAt,
                sumLength, em.sumCrc(lanes, sumAt, sumLength), j == 0 ? ranks : 0, true);
    }

    /**
     * A positive ACK from rank {@code rank}'s receiver, just noted ({@link #onAck}), while a
     * probe of that rank awaits one: the probe is answered as the receiver would answer it
     * now, with a sequence NAK where the packet it expects next is missing here. The ACK then
     * need not go on: the NAK acknowledges as much. True if the NAK replaced it.
     */
    boolean answerAwaitedProbe(int rank, Emitter em) {
        if (!probeAwaitsAck[rank]) {
            return false;
        }
        probeAwaitsAck[rank] = false;
        return answerProbe(rank, awaitedProbePsn[rank], em);
    }

    /** The slot of the live message of rank {@code rank}'s connection that holds {@code psn}, or -1. */
    private int slotOf(int rank, int psn) {
        int base = rank * slots;
        for (int t = 0; t < slots; t++) {
            if (cltValid[base + t] && Psn.inRange(psn, cltFirstPsn[base + t], slotPackets[t])) {
                return t;
            }
        }
        return -1;
    }

    /** Position (s, j) has every rank's contribution, rank {@code rank}'s last. */
    private void completePacket(int s, int j, int pk, int laneBytes, int rank, Emitter em) {
        if (!em.reserve(ranks)) {
            // Not completed: the next retransmission of any rank's packet completes it.
            return;
        }
        lanes.sum(pk, laneBytes, resultAt(s, j));
        complete[pk] = true;
        aggregationsCompleted = aggregationsCompleted + 1;
        em.count(SwitchCounters.Counter.AGGREGATIONS_COMPLETED);
        if (++slotDone[s] == slotPackets[s]) {
            messagesCompleted = messagesCompleted + 1;
            em.count(SwitchCounters.Counter.MESSAGES_COMPLETED);
        }
        int ahead = slotMsg[s] - frontierMsg;
        if (ahead < 0 || (ahead == 0 && j <= frontierPacket)) {
            emitInOrder(s, j, laneBytes, rank, em);
        } else if (!pastFrontierSent) {
            // The first result past a missing packet: its receivers see the gap and NAK it
            // (the lost packet's sender goes back N; the others' NAKs are absorbed).
            pastFrontierSent = true;
            emitToAll(s, j, laneBytes, em);
        } else {
            // Every receiver would drop it as out of sequence: it leaves once the gap closes.
            em.count(SwitchCounters.Counter.RESULTS_HELD);
        }
    }

    /** One result packet per connection, each with that connection's own stored headers. */
    private void emitToAll(int s, int j, int laneBytes, Emitter em) {
        byte[] h = headers[s];
        int result = resultAt(s, j);
        int sumCrc = em.sumCrc(lanes, result, laneBytes);
        for (int q = 0; q < ranks; q++) {
            int at = headerAt(j, q);
            int opcode = h[at] & 0xFF;
            em.emitStored(dataRoutes[q], h, at, headerLength(opcode, j), lanes, result, laneBytes, sumCrc,
                    j == 0 ? ranks : 0, false);
        }
    }

    /**
     * Results leave in the ring's order ({@link #frontierMsg}, {@link #frontierPacket}: the
     * oldest result not yet sent in order). Packet (s, j) has just completed at or before
     * that point: it is sent, and so is every completed result behind it, in order, up to the
     * next incomplete packet. A receiver takes packets only in PSN order, so a result that
     * completed while an earlier one was missing (some rank's packet was lost while its later
     * packets arrived) is of use only after that one: all but the first of them were held
     * ({@code RESULTS_HELD}), the first went out so that receivers NAK the gap, and each of
     * them goes out now ({@code RESULTS_RESENT_IN_ORDER}). Without the in-order sends a
     * sender whose go-back-N resend reached the switch before the lost packet's had nothing
     * left to recover them but its ACK timeout; without holding, every receiver dropped up to
     * a window of results per loss and the switch sent them all twice. Stops when the output
     * batch is full: the next completion, or a retransmission, resumes.
     */
    private void emitInOrder(int s, int j, int laneBytes, int rank, Emitter em) {
        boolean atFrontier = slotMsg[s] == frontierMsg && j == frontierPacket;
        sentInOrder[s * maxPackets + j] = System.nanoTime();
        emitToAll(s, j, laneBytes, em);
        if (!atFrontier) {
            return; // before the point (a message claimed late): nothing waits behind it
        }
        advanceFrontier(s);
        for (int n = 0; n < slots * maxPackets + slots; n++) {
            int t = Integer.remainderUnsigned(frontierMsg, slots);
            if (!slotActive[t] || slotMsg[t] - frontierMsg < 0) {
                return; // not claimed yet
            }
            if (slotMsg[t] != frontierMsg || slotMismatch[t]) {
                // Retired under a newer message (every rank had it), or never to be summed.
                frontierMsg++;
                frontierPacket = 0;
                pastFrontierSent = false;
                continue;
            }
            if (!complete[t * maxPackets + frontierPacket]) {
                signalGapAtFrontier(t, rank, em);
                return;
            }
            if (!em.hasRoom(ranks)) {
                return;
            }
            em.add(SwitchCounters.Counter.RESULTS_RESENT_IN_ORDER, ranks);
            sentInOrder[t * maxPackets + frontierPacket] = System.nanoTime();
            emitToAll(t, frontierPacket, lanesLength(t, frontierPacket), em);
            advanceFrontier(t);
        }
    }

    /**
     * The in-order sends stopped at a packet still missing (slot {@code frontierSlot}'s, at the
     * in-order point), past which results may already be complete and held: a second loss
     * inside the range the first one held back. Unless only rank {@code rank} lacks it, the
     * first of them goes out now, as it would have when it completed, so that receivers see
     * the new gap and NAK it: nothing else reaches them past the gap, no receiver would NAK,
     * and the ring would wait for its senders' tail probes (10 ms by default) at every loss
     * that follows another by less than a window. Rank {@code rank} completed the point just
     * before by a resend (its later packets are in, so nothing else could complete it now):
     * its go-back-N brings this packet too (after a tail probe, which resends one packet, its
     * next probe is answered with the NAK, {@link #answerProbe}), and a result past the gap
     * would only draw NAKs that cross the results on their way and make their senders go
     * back N for nothing.
     */
    private void signalGapAtFrontier(int frontierSlot, int rank, Emitter em) {
        if (pastFrontierSent || (fullMask & ~bitmap[frontierSlot * maxPackets + frontierPacket]) == 1L << rank) {
            return;
        }
        int msg = frontierMsg;
        int j = frontierPacket + 1;
        for (int m = 0; m < slots; m++, msg++, j = 0) {
            int t = Integer.remainderUnsigned(msg, slots);
            if (!slotActive[t] || slotMsg[t] != msg) {
                return; // not claimed yet: nothing past this point has completed
            }
            if (slotMismatch[t]) {
                continue;
            }
            for (; j < slotPackets[t]; j++) {
                if (complete[t * maxPackets + j]) {
                    if (em.hasRoom(ranks)) {
                        pastFrontierSent = true;
                        em.count(SwitchCounters.Counter.GAPS_SIGNALLED);
                        emitToAll(t, j, lanesLength(t, j), em);
                    }
                    return;
                }
            }
        }
    }

    /** Moves the in-order point past packet {@link #frontierPacket} of slot {@code s}'s message. */
    private void advanceFrontier(int s) {
        pastFrontierSent = false;
        if (++frontierPacket == slotPackets[s]) {
            frontierMsg++;
            frontierPacket = 0;
        }
    }

    private void claim(int s, int msg, int dataLength, int packets, Emitter em) {
        if (slotActive[s]) {
            retire(s);
        }
        // The slot's results are about to be overwritten: anything already emitted that
        // names them in place goes out first.
        em.releaseResultReferences();
        slotActive[s] = true;
        slotMsg[s] = msg;
        slotDataLength[s] = dataLength;
        slotPackets[s] = packets;
        slotDone[s] = 0;
        slotClaimedNanos[s] = System.nanoTime();
        if (!started || msg - frontierMsg < 0) {
            // The first message, or one older than every message claimed so far (its first
            // packets were lost while a later message's arrived): results start there.
            frontierMsg = msg;
            frontierPacket = 0;
            pastFrontierSent = false;
        }
        int from = s * maxPackets;
        for (int pk = from; pk < from + maxPackets; pk++) {
            lanes.release(pk); // rank buffers of a message never summed (a call mismatch)
        }
        java.util.Arrays.fill(bitmap, from, from + maxPackets, 0L);
        java.util.Arrays.fill(complete, from, from + maxPackets, false);
        java.util.Arrays.fill(sentInOrder, from, from + maxPackets, 0L);
        if (!started || msg - newestMsg > 0) {
            newestMsg = msg;
            started = true;
        }
    }

    /** Frees slot s: its message is older than every rank's window, its PSNs become stale. */
    private void retire(int s) {
        for (int r = 0; r < ranks; r++) {
            int e = r * slots + s;
            if (cltValid[e]) {
                int end = Psn.add(cltFirstPsn[e], slotPackets[s]);
                if (!retired[r] || Psn.isAfter(end, retiredEnd[r])) {
                    retiredEnd[r] = end;
                    retired[r] = true;
                }
                cltValid[e] = false;
            }
        }
    }

    /** A later packet outside every live message of its connection. */
    private void missed(Route route, int psn, boolean probe, Emitter em) {
        int rank = route.rank;
        if (retired[rank]) {
            int d = Psn.diff(psn, retiredEnd[rank]);
            if (d < 0) {
                if (d >= -staleSpan) {
                    stale(route, em);
                } else {
                    em.drop(DropReason.PSN_OUT_OF_WINDOW);
                }
                return;
            }
        }
        int reference = -1;
        int newest = 0;
        for (int t = 0; t < slots; t++) {
            int e = rank * slots + t;
            if (cltValid[e] && (reference < 0 || cltMsg[e] - newest > 0)) {
                newest = cltMsg[e];
                reference = cltFirstPsn[e];
            }
        }
        if (reference < 0 && retired[rank]) {
            reference = retiredEnd[rank];
        }
        if (reference >= 0 && Math.abs(Psn.diff(psn, reference)) > staleSpan) {
            em.drop(DropReason.PSN_OUT_OF_WINDOW);
            return;
        }
        em.drop(DropReason.FIRST_PACKET_LOST);
        if (probe && ackSeen[rank] && !answerProbe(rank, psn, em)) {
            // A probe of a message whose first packet the switch lost (its socket dropped
            // a window of this rank's packets, say): the packets before it are what the
            // receiver lacks, and only the sender's go-back-N brings them.
            askForAckIfProbeAwaits(rank, em);
        }
    }

    private void stale(Route route, Emitter em) {
        em.count(SwitchCounters.Counter.STALE_FORWARDS);
        em.forwardUnchanged(route);
    }

    int registeredConnections() {
        int n = 0;
        for (Route r : dataRoutes) {
            if (r != null) {
                n++;
            }
        }
        return n;
    }

    long messagesCompleted() {
        return messagesCompleted;
    }

    long aggregationsCompleted() {
        return aggregationsCompleted;
    }

    /** Newest msgId that claimed a slot, or null before the first message. */
    Integer newestMessage() {
        return started ? newestMsg : null;
    }
}
