package io.netreduce.netswitch.engine;

import io.netreduce.wire.roce.RoceAddressing;

import io.netreduce.netswitch.Delivered;
import io.netreduce.netswitch.RingFixture;
import io.netreduce.wire.roce.Aeth;
import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.roce.Icrc;
import io.netreduce.wire.ina.InaHeader;
import io.netreduce.wire.roce.Opcode;
import io.netreduce.wire.roce.Psn;
import io.netreduce.wire.udp.NativeUdp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static io.netreduce.netswitch.engine.SwitchCounters.Counter.AGGREGATIONS_COMPLETED;
import static io.netreduce.netswitch.engine.SwitchCounters.Counter.DUPLICATES;
import static io.netreduce.netswitch.engine.SwitchCounters.Counter.MESSAGES_COMPLETED;
import static io.netreduce.netswitch.engine.SwitchCounters.Counter.NON_DATA_FORWARDS;
import static io.netreduce.netswitch.engine.SwitchCounters.Counter.RETRANSMITTED_RESULTS;
import static io.netreduce.netswitch.engine.SwitchCounters.Counter.STALE_FORWARDS;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Engine rules (docs/switch.md, "Datapath rules, as built") exercised with crafted packets, no I/O. */
class AggregationEngineTest {
    private static final int MTU = 256;

    /**
     * Engine plus the ring hosts, collecting everything the engine emits: from a batch that
     * copies every packet whole, or from one that gathers result payloads from ring memory
     * as the native data plane's does (drained, as there, whenever a ring reuses a slot).
     */
    private static final class Harness {
        final AggregationEngine engine = new AggregationEngine(64L << 20);
        final OutputBatch out;
        final List<RingFixture> rings = new ArrayList<>();
        final List<Delivered> delivered = new ArrayList<>();
        /** Destinations and bytes of the last call's emissions. */
        final List<int[]> lastDest = new ArrayList<>();
        final List<byte[]> lastBytes = new ArrayList<>();

        Harness() {
            this(false);
        }

        Harness(boolean gathers) {
            out = new OutputBatch(256, gathers, gathers);
            if (gathers) {
                out.drainWith(this::collect);
            }
        }

        RingFixture ring(RingConfig c, int firstOctet, long seed) {
            return ring(c, new RingFixture(c, firstOctet, seed));
        }

        RingFixture ring(RingConfig c, RingFixture f) {
            engine.createRing(c);
            for (int r = 0; r < c.ranks(); r++) {
                engine.addConnection(c.ringId(), f.connection(r));
            }
            rings.add(f);
            delivered.add(new Delivered(f));
            return f;
        }

        Delivered delivered(RingFixture f) {
            return delivered.get(rings.indexOf(f));
        }

        void send(RingFixture f, int rank, ByteBuffer d) {
            sendRaw(f, rank, d);
            for (int i = 0; i < lastBytes.size(); i++) {
                int ip = lastDest.get(i)[0];
                for (int k = 0; k < rings.size(); k++) {
                    if (rings.get(k).rankOf(ip) >= 0) {
                        delivered.get(k).accept(ip, ByteBuffer.wrap(lastBytes.get(i)), lastBytes.get(i).length);
                    }
                }
            }
        }

        /** Processes one datagram and keeps what was emitted, without taking it as data deliveries. */
        void sendRaw(RingFixture f, int rank, ByteBuffer d) {
            out.clear();
            lastDest.clear();
            lastBytes.clear();
            engine.process(f.ip[rank], d, 0, d.capacity(), out);
            collect(out);
        }

        /** Takes every datagram of the batch, whole however it lies, and empties it (also the gathering batch's drain). */
        private void collect(OutputBatch b) {
            for (int i = 0; i < b.size(); i++) {
                byte[] bytes = new byte[b.length(i)];
                b.copyDatagram(i, bytes);
                lastDest.add(new int[] {b.ip(i), b.port(i)});
                lastBytes.add(bytes);
            }
            b.clear();
        }

        void sendAll(RingFixture f, int rank, List<ByteBuffer> packets) {
            for (ByteBuffer d : packets) {
                send(f, rank, d);
            }
        }

        long count(SwitchCounters.Counter c) {
            return engine.counters().get(c);
        }

        long drops(DropReason r) {
            return engine.counters().drops(r);
        }
    }

    private static RingConfig fp32(int ringId, int ranks, int window, int payload) {
        return new RingConfig(ringId, ranks, window, payload, MTU, InaHeader.DTYPE_FP32, ByteOrder.LITTLE_ENDIAN);
    }

    /** Sends one message from every rank (in the given rank order) and returns each rank's first PSN. */
    private static int[] sendMessage(Harness h, RingFixture f, int msg, byte[][] payloads, List<Integer> order) {
        int[] psn0 = new int[f.ranks()];
        List<List<ByteBuffer>> packets = new ArrayList<>();
        for (int r = 0; r < f.ranks(); r++) {
            psn0[r] = f.nextPsn(r);
            packets.add(f.message(r, msg, payloads[r]));
        }
        for (int r : order) {
            h.sendAll(f, r, packets.get(r));
        }
        return psn0;
    }

    private static List<Integer> ranksInOrder(int p) {
        List<Integer> l = new ArrayList<>();
        for (int r = 0; r < p; r++) {
            l.add(r);
        }
        return l;
    }

    /** Asserts every rank received the exact rank-order sum with its own connection's headers. */
    private static void assertResult(Harness h, RingFixture f, int msg, int[] psn0, byte[][] payloads, String ctx) {
        Delivered d = h.delivered(f);
        byte[] expected = f.referenceSum(payloads);
        int packets = f.packetsOf(payloads[0].length);
        for (int recv = 0; recv < f.ranks(); recv++) {
            int sender = (recv + f.ranks() - 1) % f.ranks();
            assertTrue(d.complete(recv, psn0[sender], packets), ctx + ": rank " + recv + " lacks result of msg " + msg);
            assertArrayEquals(expected, d.lanes(recv, psn0[sender], packets), ctx + ": sum at rank " + recv);
            InaHeader ina = d.ina(recv, psn0[sender], packets);
            assertEquals(sender, ina.rank(), ctx + ": INA header must be the sending connection's own");
            assertEquals(msg, ina.msgId(), ctx);
            assertEquals(f.config.ringId(), ina.ringId(), ctx);
            assertTrue(ina.isResult(), ctx + ": every result is marked as one: " + ina);
            assertEquals(f.ranks(), ina.contributions(), ctx + ": a sum of every rank's payload");
        }
    }

    /**
     * With the native lanes a contribution whose lower ranks are in the sum is added where it
     * lies and one that came before a lower rank's is buffered; on the Java path every one is
     * buffered. The sums are the same either way.
     */
    @Test
    void contributionsAreBufferedOnlyWhileALowerRankIsMissing() {
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(NativeUdp.available(), NativeUdp.describe());
        }
        boolean nativeLanes = NativeUdp.available()
                && !"false".equals(System.getProperty(LaneStore.ACCUMULATE_PROPERTY));
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(8, 4, 2, 1000), 10, 8);
        Random rnd = new Random(8);
        int packets = f.packetsOf(1000);
        byte[][] p = new byte[4][];
        for (int msg = 0; msg < 2; msg++) {
            for (int r = 0; r < 4; r++) {
                p[r] = f.randomPayload(rnd, 1000);
            }
            long before = h.count(SwitchCounters.Counter.CONTRIBUTIONS_BUFFERED);
            // In rank order, then ranks 3 and 1 before the 0 and 2 they wait for.
            List<Integer> order = msg == 0 ? List.of(0, 1, 2, 3) : List.of(3, 1, 0, 2);
            int[] psn0 = sendMessage(h, f, msg, p, order);
            assertResult(h, f, msg, psn0, p, "ranks in the order " + order);
            long buffered = h.count(SwitchCounters.Counter.CONTRIBUTIONS_BUFFERED) - before;
            assertEquals(nativeLanes ? (msg == 0 ? 0 : 2L * packets) : 4L * packets, buffered,
                    "ranks in the order " + order + ", native lanes: " + nativeLanes);
        }
    }

    @ParameterizedTest(name = "gathering results from ring memory: {0}")
    @ValueSource(booleans = {false, true})
    void sumsInRankOrderAndEmitsOnePacketPerConnectionWithItsOwnHeaders(boolean gathers) {
        long seed = 11;
        Harness h = new Harness(gathers);
        RingFixture f = h.ring(fp32(7, 4, 2, 1000), 10, seed);
        Random rnd = new Random(seed);
        byte[][] p = new byte[4][];
        for (int r = 0; r < 4; r++) {
            p[r] = f.randomPayload(rnd, 1000);
        }
        int[] psn0 = sendMessage(h, f, 0, p, List.of(2, 0, 3, 1));
        assertResult(h, f, 0, psn0, p, "seed " + seed);
        int packets = f.packetsOf(1000);
        assertEquals(packets, h.count(AGGREGATIONS_COMPLETED));
        assertEquals(1, h.count(MESSAGES_COMPLETED));
        assertEquals(4L * packets, h.count(SwitchCounters.Counter.PACKETS_OUT));
        // The last result packet keeps the sender's opcode and AckReq.
        byte[] last = h.delivered(f).payload(1, Psn.add(psn0[0], packets - 1));
        assertEquals(1000 + InaHeader.LENGTH - (packets - 1) * MTU, last.length);
        assertEquals(0, h.engine.counters().totalDrops());
    }

    @Test
    void duplicateBeforeCompletionIsNotReadAgain() {
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(1, 3, 2, 600), 20, 5);
        Random rnd = new Random(5);
        byte[][] p = {f.randomPayload(rnd, 600), f.randomPayload(rnd, 600), f.randomPayload(rnd, 600)};
        int psnRank1 = f.nextPsn(1);
        // Rank 1's message, then the same PSNs again with other bytes before the sum completes
        // (an RC sender resends what it sent; these bytes could only come from a sender that
        // broke that rule): the first copy counts (it came before rank 0's, so it waits in its
        // rank buffer on the native path, which the duplicate leaves alone).
        h.sendAll(f, 1, f.message(1, 0, p[1], psnRank1, false));
        int[] psn0 = new int[3];
        psn0[0] = f.nextPsn(0);
        h.sendAll(f, 0, f.message(0, 0, p[0]));
        psn0[1] = psnRank1;
        h.sendAll(f, 1, f.message(1, 0, f.randomPayload(rnd, 600)));
        psn0[2] = f.nextPsn(2);
        h.sendAll(f, 2, f.message(2, 0, p[2]));
        assertResult(h, f, 0, psn0, p, "dup before completion");
        assertEquals(f.packetsOf(600), h.count(DUPLICATES));
        assertEquals(0, h.count(RETRANSMITTED_RESULTS));
    }

    @ParameterizedTest(name = "gathering results from ring memory: {0}")
    @ValueSource(booleans = {false, true})
    void duplicateAfterCompletionReemitsStoredResultOnItsOwnConnectionOnly(boolean gathers) {
        Harness h = new Harness(gathers);
        RingFixture f = h.ring(fp32(2, 4, 2, 700), 30, 6);
        Random rnd = new Random(6);
        byte[][] p = new byte[4][];
        for (int r = 0; r < 4; r++) {
            p[r] = f.randomPayload(rnd, 700);
        }
        int psn2 = f.nextPsn(2);
        int[] psn0 = sendMessage(h, f, 0, p, ranksInOrder(4));
        int packets = f.packetsOf(700);
        // Result to rank 3 (on rank 2's connection) lost; rank 2's memory already holds other
        // bytes (in-place all-reduce), and it retransmits: the switch must not read them.
        Delivered d = h.delivered(f);
        byte[] expected = f.referenceSum(p);
        for (int j = 0; j < packets; j++) {
            d.forget(3, Psn.add(psn2, j));
        }
        // Rank 3 NAKs the first PSN it misses (as a receiver does at a gap; had it seen
        // nothing, rank 2's ACK timer would resend, later than the switch's skip lasts).
        h.sendRaw(f, 3, acknowledgeTo(f, 2, Aeth.SYNDROME_NAK_PSN_SEQUENCE_ERROR, psn2, 0));
        List<ByteBuffer> retransmission = f.message(2, 0, f.randomPayload(rnd, 700), psn2, false);
        for (ByteBuffer pkt : retransmission) {
            h.send(f, 2, pkt);
            assertEquals(1, h.lastDest.size(), "exactly one packet, on the retransmitting connection");
            assertEquals(f.ip[3], h.lastDest.get(0)[0]);
        }
        assertArrayEquals(expected, d.lanes(3, psn2, packets));
        assertEquals(2, d.ina(3, psn2, packets).rank());
        assertEquals(packets, h.count(RETRANSMITTED_RESULTS));
        assertEquals(packets, h.count(AGGREGATIONS_COMPLETED), "no new aggregation");
        assertResult(h, f, 0, psn0, p, "after retransmission");
    }

    @Test
    void packetsOfAMessageWhoseFirstPacketWasLostAreDroppedUntilGoBackN() {
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(3, 2, 2, 1200), 40, 7);
        Random rnd = new Random(7);
        byte[][] p = {f.randomPayload(rnd, 1200), f.randomPayload(rnd, 1200)};
        int[] psn0 = {f.nextPsn(0), f.nextPsn(1)};
        List<ByteBuffer> m0 = f.message(0, 0, p[0]);
        List<ByteBuffer> m1 = f.message(1, 0, p[1]);
        // Rank 0's first packet is lost: everything after it is dropped.
        for (int j = 1; j < m0.size(); j++) {
            h.send(f, 0, m0.get(j));
            assertTrue(h.lastDest.isEmpty());
        }
        assertEquals(m0.size() - 1, h.drops(DropReason.FIRST_PACKET_LOST));
        h.sendAll(f, 1, m1);
        assertEquals(0, h.count(AGGREGATIONS_COMPLETED));
        // Go-back-N resends from the first packet.
        h.sendAll(f, 0, m0);
        assertResult(h, f, 0, psn0, p, "after go-back-N");
    }

    /** PSNs of the last call's emissions to host {@code ip}, in emission order. */
    private static List<Integer> psnsTo(Harness h, int ip) {
        List<Integer> psns = new ArrayList<>();
        for (int i = 0; i < h.lastDest.size(); i++) {
            if (h.lastDest.get(i)[0] == ip) {
                psns.add(new Bth().wrap(ByteBuffer.wrap(h.lastBytes.get(i)), 0).psn());
            }
        }
        return psns;
    }

    @ParameterizedTest(name = "gathering results from ring memory: {0}")
    @ValueSource(booleans = {false, true})
    void resultsThatCompletedBehindALostPacketAreSentAgainInOrderWhenItArrives(boolean gathers) {
        // Regression (liveness under loss): rank 1's packet 1 of message 0 is lost, its packets
        // 2..3 and message 1 arrive, so those results complete first and go out while every
        // receiver still lacks packet 1; an RC receiver drops them (out of sequence). When rank
        // 1's retransmission of packet 1 completes it, the switch must send packet 1 and then
        // everything after it that is complete, in PSN order, on every connection. Before, it
        // sent packet 1 alone, and every other sender could only recover the rest by its ACK
        // timeout.
        Harness h = new Harness(gathers);
        RingFixture f = h.ring(fp32(9, 3, 2, 900), 60, 9);
        Random rnd = new Random(9);
        int packets = f.packetsOf(900);
        assertEquals(4, packets);
        byte[][] p0 = new byte[3][];
        byte[][] p1 = new byte[3][];
        int[] psn0 = new int[3];
        int[] psn1 = new int[3];
        List<List<ByteBuffer>> m0 = new ArrayList<>();
        List<List<ByteBuffer>> m1 = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            p0[r] = f.randomPayload(rnd, 900);
            p1[r] = f.randomPayload(rnd, 900);
            psn0[r] = f.nextPsn(r);
            m0.add(f.message(r, 0, p0[r]));
            psn1[r] = f.nextPsn(r);
            m1.add(f.message(r, 1, p1[r]));
        }
        for (int r = 0; r < 3; r++) {
            for (int j = 0; j < packets; j++) {
                if (!(r == 1 && j == 1)) {
                    h.send(f, r, m0.get(r).get(j));
                }
            }
            h.sendAll(f, r, m1.get(r));
        }
        assertEquals(packets - 1 + packets, h.count(AGGREGATIONS_COMPLETED));
        assertEquals(0, h.count(SwitchCounters.Counter.RESULTS_RESENT_IN_ORDER));

        h.send(f, 1, m0.get(1).get(1)); // the retransmission
        for (int recv = 0; recv < 3; recv++) {
            int sender = (recv + 2) % 3;
            List<Integer> expected = new ArrayList<>();
            for (int k = 1; k < 2 * packets; k++) {
                expected.add(Psn.add(psn0[sender], k));
            }
            assertEquals(expected, psnsTo(h, f.ip[recv]), "rank " + recv + ": packet 1, then the rest of message 0"
                    + " and all of message 1, in PSN order");
        }
        assertEquals(3L * (2 * packets - 2), h.count(SwitchCounters.Counter.RESULTS_RESENT_IN_ORDER));
        assertResult(h, f, 0, psn0, p0, "message 0");
        assertResult(h, f, 1, psn1, p1, "message 1");
        assertEquals(0, h.engine.counters().totalDrops());
    }

    /**
     * Rank 2's packet 1 of 4 is lost while its packets 2 and 3 arrive: result 2 goes out at
     * once (its receivers see the gap and NAK it), result 3 is held. Rank 2's go-back-N
     * resend of packet 1 completes it, and results 1, 2 and 3 go to every receiver in order.
     * The resends of 2 and 3 right behind it are not answered with results again, except
     * the one asking for an ACK (3, the message's last). Every receiver ends with the sum.
     */
    @Test
    void resultsPastAGapAreHeldThenSentInOrderOnce() {
        Harness h = harnessAtTestPace();
        RingFixture f = h.ring(fp32(25, 3, 2, 900), 170, 13);
        byte[][] p = new byte[3][];
        int[] first = new int[3];
        sendWithRank2sPacket1Lost(h, f, new Random(25), 900, 4, p, first);
        assertEquals(0, h.lastBytes.size(), "result 3 held");
        assertEquals(6, h.count(SwitchCounters.Counter.PACKETS_OUT), "results 0 and 2 (past the gap) to every receiver");
        assertEquals(1, h.count(SwitchCounters.Counter.RESULTS_HELD));

        List<ByteBuffer> again = f.message(2, 0, p[2], first[2], false);
        h.send(f, 2, again.get(1));
        assertEquals(9, h.lastBytes.size(), "results 1, 2 and 3 to every receiver");
        for (int recv = 0; recv < 3; recv++) {
            int sender = (recv + 2) % 3;
            List<Integer> psns = new ArrayList<>();
            for (int i = 0; i < h.lastDest.size(); i++) {
                if (h.lastDest.get(i)[0] == f.ip[recv]) {
                    psns.add(new Bth().wrap(ByteBuffer.wrap(h.lastBytes.get(i)), 0).psn());
                }
            }
            assertEquals(List.of(Psn.add(first[sender], 1), Psn.add(first[sender], 2), Psn.add(first[sender], 3)), psns,
                    "rank " + recv + ": in PSN order");
        }
        assertEquals(6, h.count(SwitchCounters.Counter.RESULTS_RESENT_IN_ORDER));
        h.send(f, 2, again.get(2));
        assertEquals(0, h.lastBytes.size(), "a resend right behind the completion: not sent again");
        assertEquals(1, h.count(SwitchCounters.Counter.RETRANSMISSIONS_ALREADY_SENT));
        h.send(f, 2, again.get(3));
        assertEquals(1, h.lastBytes.size(), "the last packet asks for an ACK: its result goes again");
        assertEquals(f.ip[f.successor(2)], h.lastDest.get(0)[0]);
        assertArrayEquals(f.referenceSum(p), h.delivered(f).lanes(f.successor(2), first[2], 4));
        assertResult(h, f, 0, first, p, "every receiver");
        String summary = h.engine.counters().summary();
        assertTrue(summary.contains("results_held=1") && summary.contains("retransmissions_already_sent=1"), summary);
        assertFalse(summary.contains("drops{"), "only what moved: " + summary);
    }

    /**
     * Two losses inside one held range: rank 2's packet 1 and packet 3 of 6, rank
     * {@code second}'s. Result 2 goes out past the first gap, 4 and 5 are held. Rank 2's resend
     * of packet 1 sends 1 and 2 in order and stops at 3. If rank 0 lost packet 3, result 4
     * goes out at once, so that receivers see the second gap and NAK it (before, nothing past
     * 3 reached them, no receiver NAKed, and the ring waited for rank 0's tail probe). If rank
     * 2 lost it too, nothing goes: its go-back-N, which completed 1, brings 3 next, and a
     * result past the gap would only draw NAKs that cross the results.
     */
    @ParameterizedTest(name = "second loss: rank {0}")
    @ValueSource(ints = {0, 2})
    void aSecondGapBehindTheFirstIsSignalledUnlessTheResendingRankLacksIt(int second) {
        Harness h = new Harness();
        h.engine.resendSkipNanos(TimeUnit.SECONDS.toNanos(60)); // this test's pace is no sender's timer
        RingFixture f = h.ring(fp32(27, 3, 2, 1400), 190, 15);
        Random rnd = new Random(27);
        byte[][] p = new byte[3][];
        int[] first = new int[3];
        List<List<ByteBuffer>> m = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            p[r] = f.randomPayload(rnd, 1400);
            first[r] = f.nextPsn(r);
            m.add(f.message(r, 0, p[r]));
        }
        assertEquals(6, m.get(0).size(), "packets of the message");
        for (int r = 0; r < 3; r++) {
            for (int j = 0; j < 6; j++) {
                if (!(r == 2 && j == 1) && !(r == second && j == 3)) {
                    h.send(f, r, m.get(r).get(j));
                }
            }
        }
        assertEquals(2, h.count(SwitchCounters.Counter.RESULTS_HELD), "results 4 and 5");

        List<ByteBuffer> resend = f.message(2, 0, p[2], first[2], false);
        h.send(f, 2, resend.get(1));
        int signalled = second == 2 ? 0 : 1;
        for (int recv = 0; recv < 3; recv++) {
            int sender = (recv + 2) % 3;
            List<Integer> expected = new ArrayList<>(List.of(Psn.add(first[sender], 1), Psn.add(first[sender], 2)));
            if (signalled == 1) {
                expected.add(Psn.add(first[sender], 4));
            }
            assertEquals(expected, psnsTo(h, f.ip[recv]), "rank " + recv + ": 1 and 2 in order"
                    + (signalled == 1 ? ", then 4 past the second gap" : ", nothing past the gap rank 2's resend closes"));
        }
        assertEquals(signalled, h.count(SwitchCounters.Counter.GAPS_SIGNALLED));

        h.send(f, second, second == 2 ? resend.get(3) : f.message(0, 0, p[0], first[0], false).get(3));
        for (int recv = 0; recv < 3; recv++) {
            int sender = (recv + 2) % 3;
            assertEquals(List.of(Psn.add(first[sender], 3), Psn.add(first[sender], 4), Psn.add(first[sender], 5)),
                    psnsTo(h, f.ip[recv]), "rank " + recv + ": 3, 4 and 5 in order");
        }
        assertEquals(signalled, h.count(SwitchCounters.Counter.GAPS_SIGNALLED));
        assertResult(h, f, 0, first, p, "every receiver");
        assertEquals(0, h.engine.counters().totalDrops());
    }

    /**
     * Rank 2's packet 1 of 4 is lost and its receiver's NAK of the gap too: the receiver has
     * acknowledged packet 0 and sees nothing more. Rank 2's tail probe (its last packet,
     * asking for an ACK) is answered with the NAK that receiver would send, for PSN 1.
     */
    @Test
    void aTailProbeWhileTheReceiversNextPacketIsMissingIsAnsweredWithItsNak() {
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(26, 3, 2, 900), 180, 14);
        byte[][] p = new byte[3][];
        int[] first = new int[3];
        sendWithRank2sPacket1Lost(h, f, new Random(26), 900, 4, p, first);
        h.sendRaw(f, f.successor(2), ackTo(f, 2, first[2], 3));
        List<ByteBuffer> again = f.message(2, 0, p[2], first[2], false);
        h.sendRaw(f, 2, again.get(3));
        assertEquals(1, h.lastBytes.size(), "one answer");
        assertLastAcknowledgeToSender(h, f, 2, Aeth.SYNDROME_NAK_PSN_SEQUENCE_ERROR, Psn.add(first[2], 1), 3,
                "the receiver's NAK for the packet it expects");
        assertEquals(1, h.count(SwitchCounters.Counter.PROBES_ANSWERED_WITH_NAK));
        h.sendAll(f, 2, again.subList(1, 4));
        assertResult(h, f, 0, first, p, "after the go-back-N the NAK started");
    }

    /**
     * The switch lost rank 2's whole message 1 (its socket overflowed), while the receiver's
     * last ACK seen here is older than what it holds (it has message 0, but ACKed only its
     * packet 1). Rank 2's tail probe, a packet of message 1 whose first packet the switch
     * never saw, cannot be judged from that ACK: the switch sends the result the receiver was
     * last known to expect again, asking for an ACK, and answers the probe when the ACK
     * comes, with the NAK the receiver would send for message 1's first packet. Before this
     * the probe was dropped unanswered and the sender recovered one position per probe.
     */
    @Test
    void aProbeBehindAStaleAckIsAnsweredOnceTheReceiverReAcks() throws InterruptedException {
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(27, 3, 2, 900), 190, 15);
        Random rnd = new Random(27);
        byte[][] a = {f.randomPayload(rnd, 900), f.randomPayload(rnd, 900), f.randomPayload(rnd, 900)};
        int[] psnA = sendMessage(h, f, 0, a, ranksInOrder(3));
        assertResult(h, f, 0, psnA, a, "message 0");
        int receiver = f.successor(2);
        h.sendRaw(f, receiver, ackTo(f, 2, Psn.add(psnA[2], 1), 0));

        byte[][] b = {f.randomPayload(rnd, 900), f.randomPayload(rnd, 900), f.randomPayload(rnd, 900)};
        int[] psnB = new int[3];
        List<List<ByteBuffer>> m = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            psnB[r] = f.nextPsn(r);
            m.add(f.message(r, 1, b[r]));
        }
        h.sendAll(f, 0, m.get(0));
        h.sendAll(f, 1, m.get(1));
        List<ByteBuffer> probe = f.message(2, 1, b[2], psnB[2], false);
        // A tail probe comes after a quiet spell; a receiver that ACKed a moment ago is not asked.
        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(2 * Ring.RECEIVER_QUIET_NANOS));
        h.sendRaw(f, 2, probe.get(3));
        assertEquals(1, h.drops(DropReason.FIRST_PACKET_LOST));
        assertEquals(1, h.lastBytes.size(), "one packet, to the receiver");
        assertEquals(f.ip[receiver], h.lastDest.get(0)[0]);
        Bth asked = new Bth().wrap(ByteBuffer.wrap(h.lastBytes.get(0)), 0);
        assertEquals(Psn.add(psnA[2], 2), asked.psn(), "the result the receiver was last known to expect");
        assertTrue(asked.ackRequest(), "asking for an ACK");
        assertEquals(1, h.count(SwitchCounters.Counter.ACKS_ASKED));

        h.sendRaw(f, receiver, ackTo(f, 2, Psn.add(psnA[2], 3), 1));
        assertEquals(1, h.lastBytes.size(), "the ACK goes on as the NAK the probe draws");
        assertLastAcknowledgeToSender(h, f, 2, Aeth.SYNDROME_NAK_PSN_SEQUENCE_ERROR, psnB[2], 1,
                "the receiver's NAK for message 1's first packet");
        assertEquals(1, h.count(SwitchCounters.Counter.PROBES_ANSWERED_WITH_NAK));
        h.sendAll(f, 2, m.get(2));
        assertResult(h, f, 1, psnB, b, "after the go-back-N the NAK started");
    }

    /**
     * A harness whose resend skip (rule 8) outlasts the test: the test's own pace between
     * packets is no sender's timer, and a loaded machine must not make it look like one.
     */
    private static Harness harnessAtTestPace() {
        Harness h = new Harness();
        h.engine.resendSkipNanos(TimeUnit.SECONDS.toNanos(60));
        return h;
    }

    /**
     * Every rank of a 3-rank ring sends message 0 of {@code payload} bytes ({@code packets}
     * packets), except rank 2's packet 1, lost; fills each rank's payload into {@code p} and
     * first PSN into {@code first}, and returns every rank's packets.
     */
    private static List<List<ByteBuffer>> sendWithRank2sPacket1Lost(Harness h, RingFixture f, Random rnd, int payload,
                                                                   int packets, byte[][] p, int[] first) {
        List<List<ByteBuffer>> m = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            p[r] = f.randomPayload(rnd, payload);
            first[r] = f.nextPsn(r);
            m.add(f.message(r, 0, p[r]));
        }
        assertEquals(packets, m.get(0).size(), "packets of the message");
        h.sendAll(f, 0, m.get(0));
        h.sendAll(f, 1, m.get(1));
        for (int j = 0; j < packets; j++) {
            if (j != 1) {
                h.send(f, 2, m.get(2).get(j));
            }
        }
        return m;
    }

    @Test
    void inOrderCompletionsResendNothing() {
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(10, 3, 2, 900), 70, 10);
        Random rnd = new Random(10);
        for (int msg = 0; msg < 5; msg++) {
            byte[][] p = {f.randomPayload(rnd, 900), f.randomPayload(rnd, 900), f.randomPayload(rnd, 900)};
            int[] psn0 = sendMessage(h, f, msg, p, List.of(2, 1, 0));
            assertResult(h, f, msg, psn0, p, "message " + msg);
        }
        assertEquals(0, h.count(SwitchCounters.Counter.RESULTS_RESENT_IN_ORDER));
        assertEquals(3L * 5 * f.packetsOf(900), h.count(SwitchCounters.Counter.PACKETS_OUT));
    }

    @Test
    void laterMessageWithLostFirstPacketIsDroppedNotForwarded() {
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(4, 2, 2, 1200), 50, 8);
        Random rnd = new Random(8);
        byte[][] a = {f.randomPayload(rnd, 1200), f.randomPayload(rnd, 1200)};
        byte[][] b = {f.randomPayload(rnd, 1200), f.randomPayload(rnd, 1200)};
        int[] psnA = sendMessage(h, f, 0, a, ranksInOrder(2));
        int[] psnB = {f.nextPsn(0), f.nextPsn(1)};
        List<ByteBuffer> b0 = f.message(0, 1, b[0]);
        List<ByteBuffer> b1 = f.message(1, 1, b[1]);
        h.send(f, 0, b0.get(1)); // message 1's first packet not seen yet: must not leak to rank 1
        assertTrue(h.lastDest.isEmpty());
        assertEquals(1, h.drops(DropReason.FIRST_PACKET_LOST));
        h.sendAll(f, 0, b0);
        h.sendAll(f, 1, b1);
        assertResult(h, f, 0, psnA, a, "msg 0");
        assertResult(h, f, 1, psnB, b, "msg 1");
    }

    @Test
    void packetsOlderThanTheLiveWindowAreForwardedUnchanged() {
        Harness h = new Harness();
        int n = 2;
        RingFixture f = h.ring(fp32(5, 3, n, 500), 60, 9);
        Random rnd = new Random(9);
        List<byte[]> oldPackets = new ArrayList<>();
        int[] psnOld = null;
        for (int msg = 0; msg <= 2 * n; msg++) {
            byte[][] p = {f.randomPayload(rnd, 500), f.randomPayload(rnd, 500), f.randomPayload(rnd, 500)};
            if (msg == 0) {
                psnOld = new int[] {f.nextPsn(0), f.nextPsn(1), f.nextPsn(2)};
                for (ByteBuffer b : f.message(1, 0, p[1], psnOld[1], false)) {
                    oldPackets.add(b.array().clone());
                }
            }
            int[] psn0 = sendMessage(h, f, msg, p, ranksInOrder(3));
            assertResult(h, f, msg, psn0, p, "msg " + msg);
        }
        // Message 2N's first packets freed message 0's slot: its retransmissions are stale.
        for (byte[] old : oldPackets) {
            h.send(f, 1, ByteBuffer.wrap(old.clone()));
            assertEquals(1, h.lastDest.size());
            assertEquals(f.ip[2], h.lastDest.get(0)[0]);
            assertArrayEquals(old, h.lastBytes.get(0), "stale packet forwarded byte for byte");
        }
        assertEquals(oldPackets.size(), h.count(STALE_FORWARDS));
        assertEquals(0, h.engine.counters().totalDrops());
    }

    @ParameterizedTest(name = "gathering results from ring memory: {0}")
    @ValueSource(booleans = {false, true})
    void slotsAreReusedAcrossManyWindowsWithRanksOutOfStep(boolean gathers) {
        long seed = 12345;
        Random rnd = new Random(seed);
        Harness h = new Harness(gathers);
        int p = 5;
        int n = 3;
        int messages = 120;
        RingFixture f = h.ring(fp32(6, p, n, 900), 70, seed);
        byte[][][] payloads = new byte[messages][p][];
        int[][] psn0 = new int[messages][p];
        List<List<ByteBuffer>>[] pending = new List[p];
        int[] sent = new int[p];
        for (int r = 0; r < p; r++) {
            pending[r] = new ArrayList<>();
        }
        for (int m = 0; m < messages; m++) {
            for (int r = 0; r < p; r++) {
                payloads[m][r] = f.randomPayload(rnd, 900);
            }
        }
        // Each rank may post message i+N only after result i reached it; within that, ranks
        // advance in a random interleaving, one packet at a time.
        int guard = 0;
        while (h.count(MESSAGES_COMPLETED) < messages && guard++ < 1_000_000) {
            int r = rnd.nextInt(p);
            if (pending[r].isEmpty() && sent[r] < messages) {
                int m = sent[r];
                boolean allowed = m < n || h.delivered(f).complete(r, psn0[m - n][(r + p - 1) % p], f.packetsOf(900));
                if (allowed) {
                    psn0[m][r] = f.nextPsn(r);
                    pending[r].add(new ArrayList<>(f.message(r, m, payloads[m][r])));
                    sent[r]++;
                }
            }
            if (!pending[r].isEmpty()) {
                List<ByteBuffer> msgPackets = pending[r].get(0);
                h.send(f, r, msgPackets.remove(0));
                if (msgPackets.isEmpty()) {
                    pending[r].remove(0);
                }
            }
        }
        for (int m = 0; m < messages; m++) {
            assertResult(h, f, m, psn0[m], payloads[m], "seed " + seed + " msg " + m);
        }
        assertEquals(0, h.engine.counters().totalDrops(), "seed " + seed);
    }

    @Test
    void twoRingsInterleavedStayApart() {
        long seed = 99;
        Random rnd = new Random(seed);
        Harness h = new Harness();
        RingFixture a = h.ring(fp32(100, 3, 2, 800), 80, seed);
        RingFixture b = h.ring(new RingConfig(200, 4, 1, 400, 512, InaHeader.DTYPE_INT32, ByteOrder.BIG_ENDIAN),
                90, seed + 1);
        for (int msg = 0; msg < 6; msg++) {
            byte[][] pa = new byte[3][];
            byte[][] pb = new byte[4][];
            int[] psnA = new int[3];
            int[] psnB = new int[4];
            // One queue per connection: packets of a connection keep their order (RC),
            // across connections and rings they interleave at random.
            List<List<Runnable>> queues = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                pa[r] = a.randomPayload(rnd, 800);
                psnA[r] = a.nextPsn(r);
                List<Runnable> q = new ArrayList<>();
                for (ByteBuffer d : a.message(r, msg, pa[r])) {
                    int rank = r;
                    q.add(() -> h.send(a, rank, d));
                }
                queues.add(q);
            }
            for (int r = 0; r < 4; r++) {
                pb[r] = b.randomPayload(rnd, 400);
                psnB[r] = b.nextPsn(r);
                List<Runnable> q = new ArrayList<>();
                for (ByteBuffer d : b.message(r, msg, pb[r])) {
                    int rank = r;
                    q.add(() -> h.send(b, rank, d));
                }
                queues.add(q);
            }
            while (!queues.isEmpty()) {
                int k = rnd.nextInt(queues.size());
                queues.get(k).remove(0).run();
                if (queues.get(k).isEmpty()) {
                    queues.remove(k);
                }
            }
            assertResult(h, a, msg, psnA, pa, "seed " + seed + " ring A msg " + msg);
            assertResult(h, b, msg, psnB, pb, "seed " + seed + " ring B msg " + msg);
        }
        assertEquals(0, h.engine.counters().totalDrops());
    }

    @Test
    void int32ModeWrapsLikeFixedPointHardware() {
        Harness h = new Harness();
        RingFixture f = h.ring(new RingConfig(9, 3, 1, 64, MTU, InaHeader.DTYPE_INT32, ByteOrder.LITTLE_ENDIAN),
                100, 3);
        byte[][] p = new byte[3][64];
        for (int r = 0; r < 3; r++) {
            ByteBuffer b = ByteBuffer.wrap(p[r]).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < 16; i++) {
                b.putInt(i * 4, i == 0 ? Integer.MAX_VALUE : (r + 1) * 1_000_000 * (i % 2 == 0 ? 1 : -1) + i);
            }
        }
        int[] psn0 = sendMessage(h, f, 0, p, List.of(1, 2, 0));
        assertResult(h, f, 0, psn0, p, "int32");
        ByteBuffer got = ByteBuffer.wrap(h.delivered(f).lanes(0, psn0[2], 1)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(Integer.MAX_VALUE * 3, got.getInt(0), "wrap-around like two's complement");
        assertEquals(6_000_000 + 3 * 2, got.getInt(8));
    }

    /** An ACK from rank {@code r}'s successor to rank r for PSN {@code psn}, as its responder sends it. */
    private static ByteBuffer ackTo(RingFixture f, int r, int psn, int msn) {
        return acknowledgeTo(f, r, Aeth.SYNDROME_ACK, psn, msn);
    }

    /** An ACK-path packet from rank {@code r}'s receiver back to it. */
    private static ByteBuffer acknowledgeTo(RingFixture f, int r, int syndrome, int psn, int msn) {
        int s = f.successor(r);
        ByteBuffer ack = ByteBuffer.allocate(Bth.LENGTH + Aeth.LENGTH + Icrc.LENGTH);
        new Bth().wrap(ack, 0).set(Opcode.ACKNOWLEDGE, false, 0, f.qpnNext[r], false, psn);
        new Aeth().wrap(ack, Bth.LENGTH).set(syndrome, msn);
        new Icrc().write(f.ip[s], f.ip[r], RoceAddressing.sourcePort(f.qpnPrev[s]), 4791, ack, 0, ack.capacity());
        return ack;
    }

    /**
     * A rank whose call differs from the others' (its message's call digest): the message is
     * never summed; every rank's packets of it go on to their receivers, each first packet
     * marked as a call-mismatch notice with a valid ICRC, the rest unchanged.
     */
    @Test
    void aMessageWhoseRanksMadeDifferentCallsGoesOnAsMismatchNoticesNeverSummed() {
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(21, 3, 2, 600), 130, 7);
        Random rnd = new Random(21);
        int packets = f.packetsOf(600);
        int[] psn0 = new int[3];
        for (int r = 0; r < 3; r++) {
            psn0[r] = f.nextPsn(r);
            int call = r == 2 ? RingFixture.callOf(0) ^ 0x40 : RingFixture.callOf(0);
            h.sendAll(f, r, f.message(r, 0, f.randomPayload(rnd, 600), psn0[r], true, call));
        }
        assertEquals(0, h.count(AGGREGATIONS_COMPLETED), "a mismatched message is never summed");
        // Ranks 0 and 1 arrived before the mismatch showed: their packets wait. Rank 2's went on.
        int receiver = f.successor(2);
        assertTrue(h.delivered(f).complete(receiver, psn0[2], packets), "rank 2's notice reached its receiver");
        InaHeader notice = h.delivered(f).ina(receiver, psn0[2], packets);
        assertTrue(notice.isCallMismatch() && !notice.isResult(), notice.toString());
        // Their retransmissions (the ACK timer) find the mismatch too and go on marked.
        for (int r = 0; r < 2; r++) {
            h.sendAll(f, r, f.message(r, 0, f.randomPayload(rnd, 600), psn0[r], false, RingFixture.callOf(0)));
            InaHeader n = h.delivered(f).ina(f.successor(r), psn0[r], packets);
            assertTrue(h.delivered(f).complete(f.successor(r), psn0[r], packets) && n.isCallMismatch(),
                    "rank " + r + "'s notice: " + n);
        }
        assertEquals(3, h.count(SwitchCounters.Counter.CALL_MISMATCHES));
        assertEquals(0, h.count(AGGREGATIONS_COMPLETED));
    }

    /**
     * A late rank: the others' ACK timers run out and they retransmit. Once the receiver's
     * ACKs have shown which PSN it expects, the retransmitted first packet at exactly that
     * PSN is answered with an RNR NAK on the receiver's behalf (its DestQP the sender's QP,
     * its last MSN, a valid ICRC over receiver -> sender); any other PSN, or before any ACK,
     * is not answered. The late rank's packet then completes the sum as usual.
     */
    @Test
    void aRetransmissionWaitingForALateRankIsAnsweredNotReadyAtTheExpectedPsn() {
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(22, 3, 2, 100), 140, 9);
        Random rnd = new Random(22);
        byte[][] p = new byte[3][];
        for (int r = 0; r < 3; r++) {
            p[r] = f.randomPayload(rnd, 100);
        }
        int[] first = sendMessage(h, f, 0, p, List.of(0, 1, 2));
        // Message 1: rank 0 sends, rank 1 and 2 are late; rank 0 retransmits before any ACK was seen.
        int psn1 = f.nextPsn(0);
        long claimed = System.nanoTime();
        h.sendAll(f, 0, f.message(0, 1, p[0]));
        h.sendRaw(f, 0, f.message(0, 1, p[0], psn1, false).get(0));
        assertEquals(0, h.count(SwitchCounters.Counter.RNR_NAKS_SENT), "no ACK seen yet: the expected PSN is unknown");
        // Rank 0's receiver (rank 1) acknowledges message 0 on its way back through the switch.
        h.sendRaw(f, 1, ackTo(f, 0, first[0], 77));
        assertEquals(1, h.lastBytes.size(), "the ACK itself goes on");
        // A retransmission of another PSN than the expected one is not answered.
        h.sendRaw(f, 0, f.message(0, 1, p[0], Psn.add(psn1, 1), false).get(0));
        assertEquals(0, h.count(SwitchCounters.Counter.RNR_NAKS_SENT));
        // At the expected PSN, but the message has not waited long: a tail probe, only stored.
        h.sendRaw(f, 0, f.message(0, 1, p[0], psn1, false).get(0));
        if (System.nanoTime() - claimed < Ring.LATE_RANK_AFTER_NANOS) {
            assertEquals(0, h.count(SwitchCounters.Counter.RNR_NAKS_SENT), "a short wait is not a late rank");
        }
        sleepPast(claimed, Ring.LATE_RANK_AFTER_NANOS);
        long before = h.count(SwitchCounters.Counter.RNR_NAKS_SENT);
        h.sendRaw(f, 0, f.message(0, 1, p[0], psn1, false).get(0));
        assertEquals(before + 1, h.count(SwitchCounters.Counter.RNR_NAKS_SENT));
        assertEquals(1, h.lastBytes.size());
        assertLastAcknowledgeToSender(h, f, 0, Aeth.rnrNak(Ring.LATE_RANK_RNR_TIMER), psn1, 77, "the late-rank RNR NAK");
        // The late ranks arrive: the sum completes with rank 0's stored packet.
        h.sendAll(f, 1, f.message(1, 1, p[1]));
        h.sendAll(f, 2, f.message(2, 1, p[2]));
        assertEquals(2, h.count(MESSAGES_COMPLETED));
        assertArrayEquals(f.referenceSum(p), h.delivered(f).lanes(1, psn1, 1));
    }

    /**
     * The one datagram of the last call, checked to be an ACK-path packet to rank {@code r}
     * (its address and QP) as its receiver would send it (ICRC over receiver -> sender).
     */
    /**
     * The last datagram out is an Acknowledge to rank {@code r} on its connection (valid ICRC
     * over receiver -> sender) with this syndrome, PSN and MSN.
     */
    private static void assertLastAcknowledgeToSender(Harness h, RingFixture f, int r, int syndrome, int psn, int msn,
                                                      String what) {
        ByteBuffer b = ByteBuffer.wrap(h.lastBytes.get(0));
        assertEquals(f.ip[r], h.lastDest.get(0)[0], what + ": to the sender");
        Bth bth = new Bth().wrap(b, 0);
        assertEquals(Opcode.ACKNOWLEDGE, bth.opcode(), what);
        assertEquals(f.qpnNext[r], bth.destQp(), what);
        int s = f.successor(r);
        assertTrue(new Icrc().verify(f.ip[s], f.ip[r], RoceAddressing.sourcePort(f.qpnPrev[s]), 4791, b, 0,
                b.capacity()), what + ": ICRC over receiver -> sender");
        Aeth aeth = new Aeth().wrap(b, Bth.LENGTH);
        assertEquals(syndrome, aeth.syndrome(), what);
        assertEquals(psn, bth.psn(), what);
        assertEquals(msn, aeth.msn(), what);
    }

    private static void sleepPast(long since, long nanos) {
        long left;
        while ((left = since + nanos - System.nanoTime()) > 0) {
            try {
                Thread.sleep(left / 1_000_000 + 1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /**
     * Rank 2's middle packet of a message is lost; its last arrives, so the last position
     * completes and goes to every receiver, who all lack the middle one and NAK it. The NAKs to
     * ranks 0 and 1, whose middle packet the switch holds, go on as ACKs of the PSN before
     * (their go-back-N would resend only stored packets); the one to rank 2, whose packet is
     * missing, goes on unchanged. Rank 2's retransmission completes the middle position, and
     * the last one's result follows it again, in order, so every receiver has the sum.
     */
    @Test
    void aNakForAPacketTheSwitchHoldsGoesOnAsAnAck() {
        Harness h = new Harness();
        int payload = 600;
        RingFixture f = h.ring(fp32(23, 3, 2, payload), 150, 11);
        byte[][] p = new byte[3][];
        int[] first = new int[3];
        List<List<ByteBuffer>> packets = sendWithRank2sPacket1Lost(h, f, new Random(23), payload, 3, p, first);
        assertEquals(0, h.count(MESSAGES_COMPLETED));
        for (int r = 0; r < 3; r++) {
            int expected = Psn.add(first[r], 1);
            h.sendRaw(f, f.successor(r), acknowledgeTo(f, r, Aeth.SYNDROME_NAK_PSN_SEQUENCE_ERROR, expected, 5));
            assertEquals(1, h.lastBytes.size(), "rank " + r + "'s NAK");
            if (r == 2) {
                assertLastAcknowledgeToSender(h, f, r, Aeth.SYNDROME_NAK_PSN_SEQUENCE_ERROR, expected, 5,
                        "the rank that lost it must resend");
            } else {
                assertLastAcknowledgeToSender(h, f, r, Aeth.SYNDROME_ACK, first[r], 5,
                        "rank " + r + " has nothing to resend");
            }
        }
        assertEquals(2, h.count(SwitchCounters.Counter.NAKS_ABSORBED));
        h.send(f, 2, packets.get(2).get(1));
        assertEquals(1, h.count(MESSAGES_COMPLETED));
        assertArrayEquals(f.referenceSum(p), h.delivered(f).lanes(1, first[0], 3));
    }

    /**
     * Every rank's message of 4 packets completes and its results go to every receiver in
     * order. Rank 1, the receiver of rank 0's connection, had no receive posted and answers
     * the first result with an RNR NAK, dropping the rest. Rank 0's resend after its RNR wait
     * comes right behind the in-order send, yet each packet of it is answered with its stored
     * result: the receiver lost them all. (Before, the resends that asked for no ACK were
     * taken for go-back-N right behind a completion and not answered, and the receiver got
     * the results one tail probe at a time.)
     */
    @Test
    void aResendAfterAReceiversRnrNakIsAnsweredWithTheResults() {
        Harness h = harnessAtTestPace();
        RingFixture f = h.ring(fp32(29, 3, 2, 900), 210, 17);
        byte[][] p = new byte[3][];
        Random rnd = new Random(29);
        for (int r = 0; r < 3; r++) {
            p[r] = f.randomPayload(rnd, 900);
        }
        int[] first = sendMessage(h, f, 0, p, List.of(0, 1, 2));
        assertEquals(1, h.count(MESSAGES_COMPLETED));
        h.sendRaw(f, f.successor(0), acknowledgeTo(f, 0, Aeth.rnrNak(1), first[0], 0));
        assertLastAcknowledgeToSender(h, f, 0, Aeth.rnrNak(1), first[0], 0, "the RNR NAK goes on unchanged");
        List<ByteBuffer> resend = f.message(0, 0, p[0], first[0], false);
        for (int j = 0; j < resend.size(); j++) {
            h.send(f, 0, resend.get(j));
            assertEquals(List.of(Psn.add(first[0], j)), psnsTo(h, f.ip[f.successor(0)]), "packet " + j + "'s result");
        }
        assertEquals(0, h.count(SwitchCounters.Counter.RETRANSMISSIONS_ALREADY_SENT));
        assertEquals(4, h.count(SwitchCounters.Counter.RETRANSMITTED_RESULTS));
    }

    /**
     * Once a receiver has acknowledged a result, a retransmission of it is not sent to the
     * receiver again: one that asks for an ACK is answered with the receiver's last ACK (PSN
     * and MSN, valid ICRC over receiver -> sender), one that does not is dropped. Before the
     * ACK, the stored result is re-emitted as rule 8 says.
     */
    @Test
    void aRetransmissionOfAnAcknowledgedResultIsAnsweredWithTheReceiversAck() {
        Harness h = new Harness();
        int payload = 600;
        RingFixture f = h.ring(fp32(24, 2, 2, payload), 160, 12);
        Random rnd = new Random(24);
        byte[][] p = {f.randomPayload(rnd, payload), f.randomPayload(rnd, payload)};
        int[] first = sendMessage(h, f, 0, p, List.of(0, 1));
        assertEquals(1, h.count(MESSAGES_COMPLETED));
        List<ByteBuffer> again = f.message(0, 0, p[0], first[0], false);
        h.sendRaw(f, 0, again.get(2));
        assertEquals(1, h.lastBytes.size(), "not acknowledged yet: the stored result goes again");
        assertEquals(f.ip[f.successor(0)], h.lastDest.get(0)[0]);
        int last = Psn.add(first[0], 2);
        h.sendRaw(f, 1, ackTo(f, 0, last, 9));
        h.sendRaw(f, 0, again.get(1)); // no AckReq
        assertEquals(0, h.lastBytes.size(), "acknowledged and no ACK asked for: nothing goes out");
        h.sendRaw(f, 0, again.get(2)); // AckReq on the last packet
        assertEquals(1, h.lastBytes.size());
        assertLastAcknowledgeToSender(h, f, 0, Aeth.SYNDROME_ACK, last, 9, "the receiver's last ACK");
        assertEquals(2, h.count(SwitchCounters.Counter.ACKED_RETRANSMISSIONS));
    }

    @Test
    void acksAreForwardedUnchangedToTheSender() {
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(11, 2, 1, 100), 110, 4);
        // Rank 1 ACKs rank 0's connection: DestQP is rank 0's QP, ICRC over 1 -> 0.
        ByteBuffer ack = ByteBuffer.allocate(Bth.LENGTH + Aeth.LENGTH + Icrc.LENGTH);
        new Bth().wrap(ack, 0).set(Opcode.ACKNOWLEDGE, false, 0, f.qpnNext[0], false, 1234);
        new Aeth().wrap(ack, Bth.LENGTH).set(Aeth.SYNDROME_ACK, 1);
        new Icrc().write(f.ip[1], f.ip[0], RoceAddressing.sourcePort(f.qpnPrev[1]), 4791, ack, 0, ack.capacity());
        byte[] original = ack.array().clone();
        h.engine.process(f.ip[1], ack, 0, ack.capacity(), clear(h.out));
        assertEquals(1, h.out.size());
        assertEquals(f.ip[0], h.out.ip(0));
        byte[] sent = new byte[h.out.length(0)];
        h.out.buffer(0).get(0, sent);
        assertArrayEquals(original, sent);
        assertEquals(1, h.count(NON_DATA_FORWARDS));
    }

    @Test
    void everyHostNumberingItsQueuePairsAlikeStillRoutesDataAndAcksApart() {
        // Real devices number their queue pairs from the same start, so a host's SENDs to its
        // successor and its ACKs to its predecessor can carry the same DestQP.
        long seed = 23;
        Harness h = new Harness();
        RingConfig c = fp32(12, 4, 2, 700);
        RingFixture f = new RingFixture(c, 120, seed);
        java.util.Arrays.fill(f.qpnNext, 18);
        java.util.Arrays.fill(f.qpnPrev, 18);
        h.ring(c, f);
        Random rnd = new Random(seed);
        byte[][] p = new byte[4][];
        for (int r = 0; r < 4; r++) {
            p[r] = f.randomPayload(rnd, 700);
        }
        int[] psn0 = sendMessage(h, f, 0, p, List.of(3, 1, 0, 2));
        assertResult(h, f, 0, psn0, p, "seed " + seed);

        // Rank 2 ACKs rank 1's connection from the same address and DestQP its data uses.
        ByteBuffer ack = ByteBuffer.allocate(Bth.LENGTH + Aeth.LENGTH + Icrc.LENGTH);
        new Bth().wrap(ack, 0).set(Opcode.ACKNOWLEDGE, false, 0, 18, false, psn0[1]);
        new Aeth().wrap(ack, Bth.LENGTH).set(Aeth.SYNDROME_ACK, 1);
        new Icrc().write(f.ip[2], f.ip[1], RoceAddressing.sourcePort(18), 4791, ack, 0, ack.capacity());
        h.engine.process(f.ip[2], ack, 0, ack.capacity(), clear(h.out));
        assertEquals(1, h.out.size(), "the ACK is forwarded, not aggregated");
        assertEquals(f.ip[1], h.out.ip(0), "to the sender of the acknowledged connection");
        assertEquals(0, h.engine.counters().totalDrops());
    }

    private static OutputBatch clear(OutputBatch b) {
        b.clear();
        return b;
    }

    @Test
    void hostilePacketsAreCountedUnderTheirReasonAndNeverTouchAggregators() {
        long seed = 77;
        Random rnd = new Random(seed);
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(12, 2, 2, 600), 120, seed);
        RingFixture other = h.ring(fp32(13, 2, 2, 600), 130, seed + 1);
        byte[] good0 = f.randomPayload(rnd, 600);
        byte[] good1 = f.randomPayload(rnd, 600);
        int psn0 = f.nextPsn(0);
        List<ByteBuffer> m0 = f.message(0, 0, good0, psn0, false);

        // Unknown endpoint: valid packet from an unregistered address.
        h.send(f, 0, ByteBuffer.allocate(0)); // empty datagram
        assertEquals(1, h.drops(DropReason.TRUNCATED));
        ByteBuffer copy = dup(m0.get(0));
        h.out.clear();
        h.engine.process(f.ip[0] + 50, copy, 0, copy.capacity(), h.out);
        assertEquals(1, h.drops(DropReason.UNKNOWN_CONNECTION));
        // Rank 0 of the other ring sending with this ring's INA header.
        List<ByteBuffer> foreign = f.message(0, 0, good0, psn0, false);
        ByteBuffer x = dup(foreign.get(0));
        new Bth().wrap(x, 0).destQp(other.qpnPrev[1]);
        other.sign(0, x);
        h.send(other, 0, x);
        assertEquals(1, h.drops(DropReason.INA_RING_MISMATCH));
        // Bad ICRC.
        ByteBuffer bad = dup(m0.get(0));
        bad.put(40, (byte) (bad.get(40) ^ 1));
        h.send(f, 0, bad);
        assertEquals(1, h.drops(DropReason.BAD_ICRC));
        // Unknown opcode and TVer.
        ByteBuffer op = dup(m0.get(0));
        op.put(0, (byte) 0x1F);
        h.send(f, 0, op);
        assertEquals(1, h.drops(DropReason.UNKNOWN_OPCODE));
        // INA rank and length disagreeing with the ring.
        h.send(f, 0, withIna(f, 0, m0.get(0), InaHeader.RANK_OFFSET, 1, true));
        assertEquals(1, h.drops(DropReason.INA_RANK_MISMATCH));
        h.send(f, 0, withIna(f, 0, m0.get(0), InaHeader.PAYLOAD_LENGTH_OFFSET, 604, false));
        assertEquals(1, h.drops(DropReason.INA_LENGTH_MISMATCH));
        h.send(f, 0, withIna(f, 0, m0.get(0), InaHeader.DTYPE_OFFSET, 1, true));
        assertEquals(1, h.drops(DropReason.BAD_INA_HEADER));
        // A header marked as a result: a result that came round to the switch again, never a contribution.
        h.send(f, 0, withIna(f, 0, m0.get(0), InaHeader.FLAGS_OFFSET, InaHeader.FLAG_RESULT, true));
        assertEquals(2, h.drops(DropReason.BAD_INA_HEADER));
        // msgId far ahead of the window.
        h.sendAll(f, 0, f.message(0, 0, good0, psn0, false).subList(0, 1));
        ByteBuffer ahead = dup(f.message(0, 1000, good0, Psn.add(psn0, 50), false).get(0));
        h.send(f, 0, ahead);
        assertEquals(1, h.drops(DropReason.MSG_OUT_OF_WINDOW));
        // A PSN far from anything.
        ByteBuffer far = dup(m0.get(1));
        new Bth().wrap(far, 0).psn(Psn.add(psn0, 1 << 22), false);
        f.sign(0, far);
        h.send(f, 0, far);
        assertEquals(1, h.drops(DropReason.PSN_OUT_OF_WINDOW));
        // RDMA WRITE on a ring connection.
        ByteBuffer write = dup(m0.get(1));
        write.put(0, (byte) Opcode.RDMA_WRITE_MIDDLE);
        f.sign(0, write);
        h.send(f, 0, write);
        assertEquals(1, h.drops(DropReason.UNSUPPORTED_OPCODE));
        // Middle packet with a short payload.
        ByteBuffer shortMiddle = ByteBuffer.allocate(m0.get(1).capacity() - 4);
        shortMiddle.put(0, m0.get(1), 0, shortMiddle.capacity() - 4);
        f.sign(0, shortMiddle);
        h.send(f, 0, shortMiddle);
        assertEquals(1, h.drops(DropReason.BAD_PACKET_LENGTH));
        assertEquals(0, h.count(AGGREGATIONS_COMPLETED));

        // None of it disturbed the ring: the real message still sums exactly.
        int[] psn = {psn0, f.nextPsn(1)};
        h.sendAll(f, 0, m0);
        h.sendAll(f, 1, f.message(1, 0, good1));
        assertResult(h, f, 0, psn, new byte[][] {good0, good1}, "seed " + seed);
    }

    private static ByteBuffer dup(ByteBuffer b) {
        return ByteBuffer.wrap(b.array().clone());
    }

    private static ByteBuffer withIna(RingFixture f, int rank, ByteBuffer first, int field, int value, boolean narrow) {
        ByteBuffer d = dup(first);
        int at = Bth.LENGTH + field;
        if (field == InaHeader.DTYPE_OFFSET || field == InaHeader.FLAGS_OFFSET) {
            d.put(at, (byte) value);
        } else if (field == InaHeader.RANK_OFFSET) {
            d.putShort(at, (short) value);
        } else {
            d.putInt(at, value);
        }
        f.sign(rank, d);
        return d;
    }

    @Test
    void randomGarbageNeverThrowsAndIsAccountedFor() {
        long seed = 4242;
        Random rnd = new Random(seed);
        Harness h = new Harness();
        RingFixture f = h.ring(fp32(14, 3, 2, 500), 140, seed);
        byte[] good = f.randomPayload(rnd, 500);
        List<ByteBuffer> valid = f.message(0, 0, good, f.nextPsn(0), false);
        for (int i = 0; i < 20_000; i++) {
            ByteBuffer d;
            if (rnd.nextBoolean()) {
                byte[] b = new byte[rnd.nextInt(300)];
                rnd.nextBytes(b);
                d = ByteBuffer.wrap(b);
            } else {
                d = dup(valid.get(rnd.nextInt(valid.size())));
                for (int k = 0; k < 1 + rnd.nextInt(4); k++) {
                    d.put(rnd.nextInt(d.capacity()), (byte) rnd.nextInt(256));
                }
                if (rnd.nextBoolean()) {
                    f.sign(0, d); // well-signed garbage reaches the ring's rules
                }
            }
            h.out.clear();
            h.engine.process(rnd.nextInt(4) == 0 ? rnd.nextInt() : f.ip[0], d, 0, d.capacity(), h.out);
        }
        long in = h.count(SwitchCounters.Counter.PACKETS_IN);
        long accounted = h.engine.counters().totalDrops() + h.count(STALE_FORWARDS) + h.count(NON_DATA_FORWARDS);
        assertEquals(20_000, in);
        assertTrue(accounted <= in, "seed " + seed);
        assertFalse(h.engine.counters().totalDrops() < 15_000, "most garbage must be dropped, seed " + seed
                + ": " + h.engine.counters().totalDrops());
    }

    @Test
    void ringsThatDoNotFitTheBudgetAreRefusedAndDeletionFreesMemory() {
        AggregationEngine e = new AggregationEngine(1 << 20);
        RingConfig big = fp32(1, 8, 8, 64 * 1024);
        SwitchConfigException ex = assertThrows(SwitchConfigException.class, () -> e.createRing(big));
        assertEquals(SwitchConfigException.Kind.INSUFFICIENT_MEMORY, ex.kind());
        assertTrue(ex.getMessage().contains("ring all-reduce"), ex.getMessage());
        RingConfig small = fp32(2, 2, 2, 1000);
        e.createRing(small);
        assertEquals(small.aggregatorBytes(), e.memoryUsed());
        assertEquals(SwitchConfigException.Kind.CONFLICT,
                assertThrows(SwitchConfigException.class, () -> e.createRing(small)).kind());
        e.deleteRing(2);
        assertEquals(0, e.memoryUsed());
        assertEquals(SwitchConfigException.Kind.NOT_FOUND,
                assertThrows(SwitchConfigException.class, () -> e.deleteRing(2)).kind());
    }

    @Test
    void connectionsMustNotCollide() {
        AggregationEngine e = new AggregationEngine(64L << 20);
        RingFixture f = new RingFixture(fp32(3, 2, 1, 100), 150, 1);
        e.createRing(f.config);
        e.addConnection(3, f.connection(0));
        assertEquals(SwitchConfigException.Kind.CONFLICT,
                assertThrows(SwitchConfigException.class, () -> e.addConnection(3, f.connection(0))).kind());
        ConnectionSpec c = f.connection(1);
        ConnectionSpec outOfRange = new ConnectionSpec(5, c.srcIp(), 4791, c.srcQpn(), c.dstIp(), 4791, c.dstQpn());
        assertEquals(SwitchConfigException.Kind.INVALID,
                assertThrows(SwitchConfigException.class, () -> e.addConnection(3, outOfRange)).kind());
    }
}
