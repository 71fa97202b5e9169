package io.netreduce.wire.roce;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The switch's templated ICRC must agree bit for bit with the wire-format reference. */
class IcrcTemplateTest {
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
            ByteBuffer b = rnd.nextBoolean() ? ByteBuffer.allocateDirect(offset + len) : ByteBuffer.allocate(offset + len);
            for (int k = 0; k < b.capacity(); k++) {
                b.put(k, (byte) rnd.nextInt());
            }
            new Bth().wrap(b, offset).set(op, rnd.nextBoolean(), RoceFrame.padFor(payload), rnd.nextInt(1 << 24),
                    rnd.nextBoolean(), rnd.nextInt(1 << 24));
            b.put(offset + Bth.ECN_OFFSET, (byte) (b.get(offset + Bth.ECN_OFFSET) | (rnd.nextInt() & 0xC0)));
            byte[] template = IcrcTemplate.template(srcIp, dstIp, srcPort, 4791);
            assertEquals(reference.compute(srcIp, dstIp, srcPort, 4791, b, offset, len),
                    fast.compute(template, b, offset, len), "seed " + seed + " packet " + i);
        }
    }
}
