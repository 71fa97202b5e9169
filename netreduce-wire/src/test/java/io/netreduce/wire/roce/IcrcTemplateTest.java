package io.netreduce.wire.roce;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The templated ICRC (the switch's and the soft provider's) must agree bit for bit with the wire-format reference. */
class IcrcTemplateTest {
    /** A buffer of {@code capacity} random bytes, direct (the native CRC) or on the heap (the JDK's). */
    private static ByteBuffer randomBytes(Random rnd, int capacity, boolean direct) {
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
        for (int k = 0; k < capacity; k++) {
            b.put(k, (byte) rnd.nextInt());
        }
        return b;
    }

    @Test
    void agreesWithTheReferenceIcrcOnRandomPackets() {
        long seed = 31337;
        Random rnd = new Random(seed);
        Icrc reference = new Icrc();
        IcrcTemplate fast = new IcrcTemplate();
        for (int i = 0; i < 2000; i++) {
            int srcIp = rnd.nextInt();
            int dstIp = rnd.nextInt();
            int srcPort = RoceAddressing.sourcePort(rnd.nextInt(1 << 24));
            int payload = rnd.nextInt(4097);
            int op = rnd.nextBoolean() ? Opcode.SEND_ONLY : Opcode.SEND_LAST_WITH_IMMEDIATE;
            int len = RoceFrame.datagramLength(op, payload);
            int offset = rnd.nextInt(8);
            ByteBuffer b = randomBytes(rnd, offset + len, rnd.nextBoolean());
            new Bth().wrap(b, offset).set(op, rnd.nextBoolean(), RoceFrame.padFor(payload), rnd.nextInt(1 << 24),
                    rnd.nextBoolean(), rnd.nextInt(1 << 24));
            b.put(offset + Bth.ECN_OFFSET, (byte) (b.get(offset + Bth.ECN_OFFSET) | (rnd.nextInt() & 0xC0)));
            byte[] template = IcrcTemplate.template(srcIp, dstIp, srcPort, 4791);
            assertEquals(reference.compute(srcIp, dstIp, srcPort, 4791, b, offset, len),
                    fast.compute(template, b, offset, len), "seed " + seed + " packet " + i);
        }
    }

    /**
     * A result sent to several connections: the ICRC from its headers and its payload's CRC
     * alone is the wire-format reference's over the gathered datagram, for payload lengths
     * that come back after others have taken their place in the append tables.
     */
    @Test
    void gatheredIcrcFromThePayloadsCrcAgreesWithTheFullComputation() {
        long seed = 4242;
        System.out.println("IcrcTemplateTest seed " + seed);
        Random rnd = new Random(seed);
        IcrcTemplate template = new IcrcTemplate();
        Icrc reference = new Icrc();
        int[] lengths = {0, 4, 1024, 4096, 4092, 12, 2048, 64, 4096, 1020, 8, 4096, 0, 516, 4096};
        for (int i = 0; i < 600; i++) {
            int payloadLength = i < lengths.length * 20 ? lengths[i % lengths.length] : 4 * rnd.nextInt(1025);
            int headerLength = Bth.LENGTH + (rnd.nextBoolean() ? 0 : Reth.LENGTH);
            ByteBuffer head = randomBytes(rnd, headerLength + Icrc.LENGTH, false);
            ByteBuffer payload = randomBytes(rnd, payloadLength + 8, true);
            int at = rnd.nextInt(9) & ~3;
            int srcIp = rnd.nextInt();
            int dstIp = rnd.nextInt();
            int srcPort = RoceAddressing.sourcePort(rnd.nextInt(1 << 24));
            byte[] t = IcrcTemplate.template(srcIp, dstIp, srcPort, 4791);
            int payloadCrc = template.payloadCrc(payload, at, payloadLength);
            assertEquals(reference.computeGathered(srcIp, dstIp, srcPort, 4791, head, 0, headerLength, payload, at,
                            payloadLength, 0),
                    template.computeGathered(t, head, 0, headerLength, payloadCrc, payloadLength),
                    "seed " + seed + " packet " + i + ", payload " + payloadLength + " B");
        }
    }

    /**
     * A queue pair's packets: a few connections' templates in random turns (so the header the
     * scratch keeps is sometimes the right one and sometimes not), lengths that change from
     * packet to packet, pads, direct and heap payloads (the native call and the JDK's CRC):
     * the gathered ICRC over the payload in place agrees with the reference's.
     */
    @Test
    void gatheredIcrcOverThePayloadAgreesWithTheReferenceAcrossConnections() {
        long seed = 9001;
        System.out.println("IcrcTemplateTest connections seed " + seed);
        Random rnd = new Random(seed);
        IcrcTemplate fast = new IcrcTemplate();
        Icrc reference = new Icrc();
        int[][] endpoints = new int[3][];
        byte[][] templates = new byte[3][];
        for (int c = 0; c < endpoints.length; c++) {
            endpoints[c] = new int[] {rnd.nextInt(), rnd.nextInt(), RoceAddressing.sourcePort(rnd.nextInt(1 << 24))};
            templates[c] = IcrcTemplate.template(endpoints[c][0], endpoints[c][1], endpoints[c][2], 4791);
        }
        for (int i = 0; i < 3000; i++) {
            int c = rnd.nextInt(4) == 0 ? rnd.nextInt(endpoints.length) : i / 200 % endpoints.length;
            int[] e = endpoints[c];
            int payloadLength = rnd.nextInt(4) == 0 ? 1024 : rnd.nextInt(4097);
            int pad = RoceFrame.padFor(payloadLength);
            int headerLength = Bth.LENGTH + (rnd.nextBoolean() ? 0 : Reth.LENGTH);
            ByteBuffer head = randomBytes(rnd, 3 + headerLength + pad + Icrc.LENGTH, true);
            int at = rnd.nextInt(8);
            ByteBuffer payload = randomBytes(rnd, at + payloadLength, rnd.nextBoolean());
            assertEquals(reference.computeGathered(e[0], e[1], e[2], 4791, head, 3, headerLength, payload, at,
                            payloadLength, pad),
                    fast.computeGathered(templates[c], head, 3, headerLength, payload, at, payloadLength, pad),
                    "seed " + seed + " packet " + i + ", connection " + c + ", payload " + payloadLength + " B");
            int len = headerLength + pad + Icrc.LENGTH;
            assertEquals(reference.compute(e[0], e[1], e[2], 4791, head, 3, len), fast.compute(templates[c], head, 3, len),
                    "seed " + seed + " packet " + i + ", headers alone");
        }
    }
}
