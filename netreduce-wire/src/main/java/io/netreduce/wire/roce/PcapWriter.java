package io.netreduce.wire.roce;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes RoCEv2 datagrams to a pcap file framed as Ethernet / IPv4 / UDP, so traffic opens
 * in Wireshark or tshark ("RRoCE"). The IPv4 header is the canonical one the ICRC covers
 * (ID 0, DF, TTL 64, UDP checksum 0), so an independent checker can verify every ICRC in
 * the capture. MAC addresses are derived from the IPv4 addresses (02:00:a.b.c.d).
 *
 * <p>Thread-safe; a debugging tap, not a hot path: it copies each frame once.
 */
public final class PcapWriter implements AutoCloseable {
    /** pcap magic for nanosecond timestamps. */
    public static final int MAGIC_NANOS = 0xA1B23C4D;
    public static final int LINKTYPE_ETHERNET = 1;
    public static final int ETHERNET_HEADER_LENGTH = 14;
    public static final int ETHERTYPE_IPV4 = 0x0800;
    private static final int SNAPLEN = 65_535;
    private static final int RECORD_HEADER_LENGTH = 16;

    private final OutputStream out;
    private final ByteBuffer frame = ByteBuffer.allocate(RECORD_HEADER_LENGTH + ETHERNET_HEADER_LENGTH
            + Ipv4UdpHeader.LENGTH + SNAPLEN);
    private long frames;
    private boolean closed;

    public PcapWriter(OutputStream out) {
        this.out = new BufferedOutputStream(out, 1 << 16);
        ByteBuffer header = ByteBuffer.allocate(24).order(ByteOrder.LITTLE_ENDIAN);
        header.putInt(MAGIC_NANOS).putShort((short) 2).putShort((short) 4).putInt(0).putInt(0)
                .putInt(SNAPLEN).putInt(LINKTYPE_ETHERNET);
        write(header.array(), 24);
    }

    public static PcapWriter open(Path file) {
        try {
            return new PcapWriter(Files.newOutputStream(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create pcap file " + file, e);
        }
    }

    /**
     * Appends one datagram ({@code roce} holds BTH .. ICRC at [offset, offset + length)).
     * {@code timeNanos} is wall-clock time since the epoch.
     */
    public synchronized void write(long timeNanos, int srcIp, int dstIp, int srcPort, int dstPort,
                                   ByteBuffer roce, int offset, int length) {
        if (closed) {
            return;
        }
        int captured = ETHERNET_HEADER_LENGTH + Ipv4UdpHeader.LENGTH + length;
        frame.clear();
        frame.order(ByteOrder.LITTLE_ENDIAN);
        frame.putInt((int) (timeNanos / 1_000_000_000L)).putInt((int) (timeNanos % 1_000_000_000L))
                .putInt(captured).putInt(captured);
        frame.order(ByteOrder.BIG_ENDIAN);
        putMac(dstIp);
        putMac(srcIp);
        frame.putShort((short) ETHERTYPE_IPV4);
        Ipv4UdpHeader.write(frame, frame.position(), srcIp, dstIp, srcPort, dstPort, length);
        frame.position(frame.position() + Ipv4UdpHeader.LENGTH);
        for (int i = 0; i < length; i++) {
            frame.put(roce.get(offset + i));
        }
        write(frame.array(), frame.position());
        frames++;
    }

    private void putMac(int ip) {
        frame.put((byte) 0x02).put((byte) 0x00).putInt(ip);
    }

    private void write(byte[] bytes, int len) {
        try {
            out.write(bytes, 0, len);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write pcap frame", e);
        }
    }

    public synchronized long frames() {
        return frames;
    }

    public synchronized void flush() {
        try {
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot flush pcap file", e);
        }
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            try {
                out.close();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot close pcap file", e);
            }
        }
    }
}
