package io.netreduce.wire.roce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * ICRC against public test vectors (a ConnectX-4 Lx CNP capture and the UC SEND Only case of
 * scapy's test/contrib/roce.uts) and RC vectors that tshark decodes.
 */
class IcrcTest {
    private static final HexFormat HEX = HexFormat.of();

    /** Vectors C1–C4: IPv4 + UDP + RoCE frames; last 4 bytes are the ICRC, LSB first. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "SEND Only pad 3, 4500003400004000401126b70a0000010a000002c00112b7002000000430ffff00000011800001000102030405000000e66a9672, e66a9672",
        "WRITE Only psn 0xFFFFFF, 4500004400004000401126a70a0000010a000002c00112b7003000000a00ffff0000001180ffffff000000000000100000001234000000080001020304050607b901469c, b901469c",
        "ACK, 4500003000004000401126bb0a0000010a000002c00112b7001c00001100ffff00000022000001001f000001f1c9cd77, f1c9cd77",
        "NAK PSN sequence error, 4500003000004000401126bb0a0000010a000002c00112b7001c00001100ffff0000002200000101600000018b50f179, 8b50f179"
    })
    void projectVectors(String name, String frameHex, String icrcWireHex) {
        ByteBuffer frame = ByteBuffer.wrap(HEX.parseHex(frameHex));
        int len = frame.capacity();
        Icrc icrc = new Icrc();
        int fromIpv4 = icrc.computeFromIpv4(frame, 0, len);
        assertEquals(Icrc.load(frame, len - 4), fromIpv4, name + ": ICRC over the frame's own headers");
        assertEquals(icrcWireHex, HEX.formatHex(frame.array(), len - 4, len), name + ": stored LSB first");

        // The same ICRC from the canonical header built from addresses and ports alone.
        int src = frame.getInt(12);
        int dst = frame.getInt(16);
        int sport = frame.getShort(20) & 0xFFFF;
        int dport = frame.getShort(22) & 0xFFFF;
        assertEquals(fromIpv4, icrc.compute(src, dst, sport, dport, frame, 28, len - 28), name + ": canonical header");
        assertTrue(icrc.verify(src, dst, sport, dport, frame, 28, len - 28));

        // Corrupting any covered byte breaks verification.
        frame.put(len - 6, (byte) (frame.get(len - 6) ^ 0x01));
        assertFalse(icrc.verify(src, dst, sport, dport, frame, 28, len - 28), name + ": corruption detected");
    }

    @Test
    void hardwareCnpCaptureFromConnectX4() {
        // Ethernet frame of a ConnectX-4 Lx CNP; IPv4 starts at 14, ICRC is the last 4 bytes.
        String hex = "e41d2dab2bc27cfe90643b320800"
                + "45c2003c718c400040119161" + "0a0011010a001201"
                + "000012b700280000"
                + "8100ffff4000011800000000"
                + "00000000000000000000000000000000"
                + "82fd002a";
        ByteBuffer frame = ByteBuffer.wrap(HEX.parseHex(hex));
        Icrc icrc = new Icrc();
        int value = icrc.computeFromIpv4(frame, 14, frame.capacity() - 14);
        assertEquals(0x2A00FD82, value);
        assertEquals(value, Icrc.load(frame, frame.capacity() - 4));
    }

    @Test
    void scapyUcSendOnly() {
        ByteBuffer f = ByteBuffer.allocate(64);
        // IPv4 192.168.0.7 -> 192.168.0.7, tos 1, id 1144, DF, ttl 64, len 64 (checksum masked anyway)
        f.put(HEX.parseHex("450100400478400040110000" + "c0a80007" + "c0a80007"));
        f.putShort((short) 49152).putShort((short) 4791).putShort((short) 44).putShort((short) 0xaca2);
        // BTH: opcode 0x24, M=1, pad 2, pkey 0xffff, dqpn 211, psn 13571856
        f.put((byte) 0x24).put((byte) 0x60).putShort((short) 0xffff).putInt(211).putInt(13571856);
        f.put(HEX.parseHex("4630818be28935d90e9a95505401be885e500000"));
        f.put(HEX.parseHex("78f353f3"));
        assertEquals(64, f.position());
        assertEquals(Icrc.load(f, 60), new Icrc().computeFromIpv4(f, 0, 64));
    }

    @Test
    void maskedFieldsDoNotChangeTheIcrc() {
        String c1 = "4500003400004000401126b70a0000010a000002c00112b7002000000430ffff00000011800001000102030405000000e66a9672";
        ByteBuffer f = ByteBuffer.wrap(HEX.parseHex(c1));
        Icrc icrc = new Icrc();
        int base = icrc.computeFromIpv4(f, 0, f.capacity());
        f.put(1, (byte) 0xC2);                // TOS / ECN
        f.put(8, (byte) 3);                   // TTL
        f.put(32, (byte) 0xC0);               // FECN + BECN
        f.putShort(26, (short) 0x1234);       // UDP checksum
        assertEquals(base, icrc.computeFromIpv4(f, 0, f.capacity()));
        f.putShort(4, (short) 1);             // IP ID is covered
        assertTrue(base != icrc.computeFromIpv4(f, 0, f.capacity()));
    }

    @Test
    void directBuffersAndOffsetsGiveTheSameValueAndKeepPosition() {
        String c2 = "4500004400004000401126a70a0000010a000002c00112b7003000000a00ffff0000001180ffffff000000000000100000001234000000080001020304050607b901469c";
        byte[] bytes = HEX.parseHex(c2);
        ByteBuffer direct = ByteBuffer.allocateDirect(bytes.length + 100);
        direct.position(37).put(bytes).position(5).limit(direct.capacity() - 3);
        Icrc icrc = new Icrc();
        int roceLen = bytes.length - 28;
        assertTrue(icrc.verify(0x0a000001, 0x0a000002, 0xc001, 4791, direct, 37 + 28, roceLen));
        assertEquals(5, direct.position());
        assertEquals(direct.capacity() - 3, direct.limit());
        // write() recomputes after a header rewrite
        new Bth().wrap(direct, 37 + 28).psn(0x123456, true);
        assertFalse(icrc.verify(0x0a000001, 0x0a000002, 0xc001, 4791, direct, 37 + 28, roceLen));
        icrc.write(0x0a000001, 0x0a000002, 0xc001, 4791, direct, 37 + 28, roceLen);
        assertTrue(icrc.verify(0x0a000001, 0x0a000002, 0xc001, 4791, direct, 37 + 28, roceLen));
    }

    @Test
    void aDatagramInPiecesHasTheIcrcOfTheAssembledOne() {
        long seed = 23;
        java.util.Random random = new java.util.Random(seed);
        Icrc icrc = new Icrc();
        for (int headerLength : new int[] {Bth.LENGTH, Bth.LENGTH + 16}) {
            for (int payloadLength : new int[] {1, 3, 1024, 4093}) {
                int pad = RoceFrame.padFor(payloadLength);
                int length = headerLength + payloadLength + pad + Icrc.LENGTH;
                ByteBuffer assembled = ByteBuffer.allocateDirect(length + 9);
                byte[] header = new byte[headerLength];
                byte[] payload = new byte[payloadLength];
                random.nextBytes(header);
                random.nextBytes(payload);
                assembled.put(9, header).put(9 + headerLength, payload);
                ByteBuffer head = ByteBuffer.allocateDirect(headerLength + 5).put(5, header);
                ByteBuffer data = ByteBuffer.allocateDirect(payloadLength + 7).put(7, payload).position(2).limit(6);
                int whole = icrc.compute(0x7f000001, 0x7f000002, 0xc001, 4791, assembled, 9, length);
                int pieces = icrc.computeGathered(0x7f000001, 0x7f000002, 0xc001, 4791, head, 5, headerLength, data, 7,
                        payloadLength, pad);
                assertEquals(whole, pieces, "seed " + seed + ", " + headerLength + " + " + payloadLength);
                assertEquals(2, data.position());
                assertEquals(6, data.limit());
            }
        }
    }

    /** A datagram said to run past its buffer is refused with an exception, on the native path too (no read past it). */
    @Test
    void aLengthPastTheBufferThrowsInsteadOfReadingOn() {
        ByteBuffer direct = ByteBuffer.allocateDirect(100);
        Icrc icrc = new Icrc();
        assertThrows(IndexOutOfBoundsException.class,
                () -> icrc.compute(0x7f000001, 0x7f000002, 49152, 4791, direct, 40, 100));
        IcrcTemplate t = new IcrcTemplate();
        byte[] template = IcrcTemplate.template(0x7f000001, 0x7f000002, 49152, 4791);
        assertThrows(IndexOutOfBoundsException.class, () -> t.compute(template, direct, 40, 100));
        assertThrows(IndexOutOfBoundsException.class, () -> t.payloadCrc(direct, 90, 20));
    }
}
