package io.netreduce.verbs.capture;

import io.netreduce.wire.roce.Aeth;
import io.netreduce.wire.roce.Bth;
import io.netreduce.wire.roce.FrameError;
import io.netreduce.wire.roce.Icrc;
import io.netreduce.wire.roce.ImmDt;
import io.netreduce.wire.roce.Ipv4UdpHeader;
import io.netreduce.wire.roce.Opcode;
import io.netreduce.wire.roce.PcapWriter;
import io.netreduce.wire.roce.Psn;
import io.netreduce.wire.roce.Reth;
import io.netreduce.wire.roce.RoceFrame;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import io.netreduce.verbs.testing.Tshark;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Frames built with the flyweights, written by {@link PcapWriter}, read back both by a
 * plain pcap parser here (every ICRC verifies) and by tshark (every frame decodes as RoCE
 * with the opcode we wrote, nothing malformed).
 */
class PcapWriterTest {
    static final int SRC = 0x7F00000A;
    static final int DST = 0x7F00000B;

    @TempDir
    Path dir;

    @Test
    @Timeout(60)
    void framesVerifyAndDecodeInTshark() throws Exception {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        Path file = dir.resolve("frames.pcap");
        int[] opcodes = {Opcode.SEND_FIRST, Opcode.SEND_MIDDLE, Opcode.SEND_LAST, Opcode.SEND_ONLY,
            Opcode.SEND_ONLY_WITH_IMMEDIATE, Opcode.RDMA_WRITE_ONLY, Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE,
            Opcode.RDMA_WRITE_LAST_WITH_IMMEDIATE, Opcode.ACKNOWLEDGE};
        int[] payloads = {1024, 1024, 5, 0, 3, 8, 1023, 16, 0};
        Icrc icrc = new Icrc();
        ByteBuffer pkt = ByteBuffer.allocateDirect(2048);
        try (PcapWriter w = PcapWriter.open(file)) {
            for (int i = 0; i < opcodes.length; i++) {
                int op = opcodes[i];
                int len = RoceFrame.datagramLength(op, payloads[i]);
                new Bth().wrap(pkt, 0).set(op, false, RoceFrame.padFor(payloads[i]), 0x11, Opcode.isEnd(op),
                        Psn.add(0xFFFFFE, i));
                int at = Bth.LENGTH;
                if (Opcode.hasReth(op)) {
                    new Reth().wrap(pkt, at).set(0x1000, 0x1234, payloads[i]);
                    at += Reth.LENGTH;
                }
                if (Opcode.hasImmediate(op)) {
                    new ImmDt().wrap(pkt, at).value(rnd.nextInt());
                    at += ImmDt.LENGTH;
                }
                if (Opcode.hasAeth(op)) {
                    new Aeth().wrap(pkt, at).set(Aeth.SYNDROME_ACK, i);
                    at += Aeth.LENGTH;
                }
                for (int j = 0; j < payloads[i]; j++) {
                    pkt.put(at + j, (byte) rnd.nextInt());
                }
                for (int j = 0; j < RoceFrame.padFor(payloads[i]); j++) {
                    pkt.put(at + payloads[i] + j, (byte) 0);
                }
                icrc.write(SRC, DST, 0xC000 | i, 4791, pkt, 0, len);
                assertEquals(FrameError.NONE, new RoceFrame().wrap(pkt, 0, len), "seed " + seed);
                w.write(System.currentTimeMillis() * 1_000_000L, SRC, DST, 0xC000 | i, 4791, pkt, 0, len);
            }
        }
        // Independent read-back: every record's ICRC verifies over its own IPv4 header.
        List<ByteBuffer> frames = readPcap(file);
        assertEquals(opcodes.length, frames.size());
        for (ByteBuffer f : frames) {
            int ip = PcapWriter.ETHERNET_HEADER_LENGTH;
            assertEquals(0, Ipv4UdpHeader.ipChecksum(f, ip) & 0xFFFF, "IPv4 header checksum valid");
            assertEquals(Icrc.load(f, f.capacity() - 4), icrc.computeFromIpv4(f, ip, f.capacity() - ip));
        }

        List<String> lines = Tshark.fields(file, "infiniband.bth.opcode", "_ws.malformed", "_ws.expert.severity");
        assertEquals(opcodes.length, lines.size(), "tshark decoded every frame: " + lines);
        for (int i = 0; i < opcodes.length; i++) {
            String[] cols = lines.get(i).split("\t", -1);
            assertEquals(String.valueOf(opcodes[i]), cols[0], "frame " + (i + 1) + " opcode: " + lines.get(i));
            assertTrue(cols.length < 2 || cols[1].isEmpty(), "frame " + (i + 1) + " malformed: " + lines.get(i));
        }
    }

    static List<ByteBuffer> readPcap(Path file) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(PcapWriter.MAGIC_NANOS, b.getInt(0));
        assertEquals(PcapWriter.LINKTYPE_ETHERNET, b.getInt(20));
        b.position(24);
        List<ByteBuffer> out = new ArrayList<>();
        while (b.remaining() >= 16) {
            b.getInt();
            b.getInt();
            int incl = b.getInt();
            b.getInt();
            byte[] data = new byte[incl];
            b.get(data);
            out.add(ByteBuffer.wrap(data));
        }
        return out;
    }
}
