package io.netreduce.wire.roce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class PsnAndOpcodeTest {

    @Test
    void psnWrapsAt24Bits() {
        assertEquals(0, Psn.next(0xFFFFFF));
        assertEquals(4, Psn.add(0xFFFFFE, 6));
        assertTrue(Psn.isAfter(0, 0xFFFFFF), "0 follows 0xFFFFFF");
        assertTrue(Psn.isBefore(0xFFFFF0, 5));
        assertEquals(6, Psn.diff(4, 0xFFFFFE));
        assertEquals(-6, Psn.diff(0xFFFFFE, 4));
        assertEquals(0, Psn.compare(77, 77));
        assertTrue(Psn.inRange(1, 0xFFFFFF, 3));
        assertFalse(Psn.inRange(2, 0xFFFFFF, 3));
        assertTrue(Psn.isAfter(Psn.HALF_SPACE - 1, 0), "just under half the space ahead is after");
        assertTrue(Psn.isBefore(Psn.HALF_SPACE + 1, 0), "past half the space reads as behind");
    }

    @Test
    void opcodeTableMatchesSpec() {
        assertEquals(0, Opcode.extensionHeaderLength(Opcode.SEND_FIRST));
        assertEquals(4, Opcode.extensionHeaderLength(Opcode.SEND_ONLY_WITH_IMMEDIATE));
        assertEquals(16, Opcode.extensionHeaderLength(Opcode.RDMA_WRITE_FIRST));
        assertEquals(20, Opcode.extensionHeaderLength(Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE));
        assertEquals(Bth.LENGTH + Reth.LENGTH, Opcode.immediateOffset(Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE));
        assertEquals(4, Opcode.extensionHeaderLength(Opcode.ACKNOWLEDGE));
        assertTrue(Opcode.isStart(Opcode.SEND_ONLY) && Opcode.isEnd(Opcode.SEND_ONLY));
        assertFalse(Opcode.isRequest(Opcode.ACKNOWLEDGE));
        assertFalse(Opcode.isKnown(0x15));
        assertEquals(Opcode.SEND_ONLY, Opcode.send(0, 1, false));
        assertEquals(Opcode.SEND_FIRST, Opcode.send(0, 3, false));
        assertEquals(Opcode.SEND_MIDDLE, Opcode.send(1, 3, false));
        assertEquals(Opcode.SEND_LAST_WITH_IMMEDIATE, Opcode.send(2, 3, true));
        assertEquals(Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE, Opcode.write(0, 1, true));
        assertEquals(Opcode.RDMA_WRITE_LAST, Opcode.write(4, 5, false));
    }

    @Test
    void bthRoundTripsEveryField() {
        ByteBuffer b = ByteBuffer.allocate(12);
        Bth bth = new Bth().wrap(b, 0).set(Opcode.SEND_LAST, true, 3, 0xABCDEF, true, 0xFFFFFF);
        assertEquals(Opcode.SEND_LAST, bth.opcode());
        assertTrue(bth.solicitedEvent());
        assertEquals(3, bth.padCount());
        assertEquals(0, bth.transportVersion());
        assertEquals(0xFFFF, bth.pkey());
        assertEquals(0xABCDEF, bth.destQp());
        assertTrue(bth.ackRequest());
        assertEquals(0xFFFFFF, bth.psn());
        bth.ackRequest(false);
        assertFalse(bth.ackRequest());
        assertEquals(0xFFFFFF, bth.psn());
        assertEquals("02b0ffff00abcdef00ffffff", java.util.HexFormat.of().formatHex(b.array()));
    }

    @Test
    void aethSyndromes() {
        assertTrue(Aeth.isAck(Aeth.SYNDROME_ACK));
        assertTrue(Aeth.isNak(Aeth.SYNDROME_NAK_PSN_SEQUENCE_ERROR));
        assertTrue(Aeth.isRnrNak(Aeth.rnrNak(14)));
        assertEquals(1_280, Aeth.rnrTimerMicros(14));
        assertEquals(655_360, Aeth.rnrTimerMicros(0));
        assertEquals(14, Aeth.rnrTimerCode(1_280));
        assertEquals(14, Aeth.rnrTimerCode(1_000));
        ByteBuffer b = ByteBuffer.allocate(4);
        Aeth a = new Aeth().wrap(b, 0).set(Aeth.SYNDROME_NAK_PSN_SEQUENCE_ERROR, 0x123456);
        assertEquals(0x60, a.syndrome());
        assertEquals(0x123456, a.msn());
    }

    @Test
    void frameParsesAndRejects() {
        ByteBuffer b = ByteBuffer.allocate(64);
        int len = RoceFrame.datagramLength(Opcode.SEND_ONLY_WITH_IMMEDIATE, 5);
        assertEquals(12 + 4 + 5 + 3 + 4, len);
        new Bth().wrap(b, 0).set(Opcode.SEND_ONLY_WITH_IMMEDIATE, false, 3, 7, true, 1);
        new ImmDt().wrap(b, 12).value(0xCAFE);
        RoceFrame f = new RoceFrame();
        assertEquals(FrameError.NONE, f.wrap(b, 0, len));
        assertEquals(16, f.payloadOffset());
        assertEquals(5, f.payloadLength());
        assertEquals(0xCAFE, f.immDt().value());
        assertEquals(FrameError.TRUNCATED, f.wrap(b, 0, 15));
        b.put(0, (byte) 0x15);
        assertEquals(FrameError.UNKNOWN_OPCODE, f.wrap(b, 0, len));
        b.put(0, (byte) Opcode.ACKNOWLEDGE);
        assertEquals(FrameError.BAD_PAD, f.wrap(b, 0, len), "an ACK carries no payload");
        assertEquals(FrameError.NONE, f.wrap(b.put(1, (byte) 0), 0, 20));
        b.put(1, (byte) 0x01);
        assertEquals(FrameError.BAD_TRANSPORT_VERSION, f.wrap(b, 0, 20));
    }
}
