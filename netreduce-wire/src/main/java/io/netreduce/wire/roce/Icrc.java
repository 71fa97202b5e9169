package io.netreduce.wire.roce;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32;

/**
 * RoCEv2 Invariant CRC (IBTA Annex A17): standard CRC-32 over 8 bytes of 0xFF, the IPv4
 * and UDP headers and the BTH with their variant fields masked to ones, then everything
 * after the BTH through the pad. Stored least-significant byte first.
 *
 * <p>Over UDP sockets the real IP header is the kernel's, so the canonical header of
 * {@link Ipv4UdpHeader} stands in for it. Not thread-safe: each thread keeps its own
 * instance; computing allocates nothing and streams the payload straight from the buffer,
 * whose position and limit it moves for the duration of the call.
 */
public final class Icrc {
    public static final int LENGTH = 4;
    private static final int MASKED_LENGTH = Ipv4UdpHeader.LENGTH + Bth.LENGTH;
    private static final byte[] LRH_STANDIN = {-1, -1, -1, -1, -1, -1, -1, -1};

    private final CRC32 crc = new CRC32();
    private final ByteBuffer masked = ByteBuffer.allocate(MASKED_LENGTH);

    /**
     * ICRC of a RoCE datagram ({@code roce} holds BTH .. ICRC at [offset, offset + length)),
     * sent from {@code srcIp:srcPort} to {@code dstIp:dstPort}.
     */
    public int compute(int srcIp, int dstIp, int srcPort, int dstPort, ByteBuffer roce, int offset, int length) {
        if (length < Bth.LENGTH + LENGTH) {
            throw new IllegalArgumentException("RoCE datagram of " + length + " bytes is shorter than BTH + ICRC");
        }
        Ipv4UdpHeader.write(masked, 0, srcIp, dstIp, srcPort, dstPort, length);
        for (int i = 0; i < Bth.LENGTH; i++) {
            masked.put(Ipv4UdpHeader.LENGTH + i, roce.get(offset + i));
        }
        return computeMasked(roce, offset, length);
    }

    /**
     * ICRC of a RoCE datagram that lies in pieces, as a socket gathers it: its first {@code
     * headerLength} bytes (BTH and extension headers) at {@code head[headOffset..]}, then the
     * payload at {@code payload[payloadOffset, +payloadLength)}, then {@code pad} zero bytes
     * and the ICRC. The same value as {@link #compute} over the assembled datagram.
     */
    public int computeGathered(int srcIp, int dstIp, int srcPort, int dstPort, ByteBuffer head, int headOffset,
                               int headerLength, ByteBuffer payload, int payloadOffset, int payloadLength, int pad) {
        if (headerLength < Bth.LENGTH) {
            throw new IllegalArgumentException("RoCE headers of " + headerLength + " bytes are shorter than a BTH");
        }
        int length = headerLength + payloadLength + pad + LENGTH;
        Ipv4UdpHeader.write(masked, 0, srcIp, dstIp, srcPort, dstPort, length);
        for (int i = 0; i < Bth.LENGTH; i++) {
            masked.put(Ipv4UdpHeader.LENGTH + i, head.get(headOffset + i));
        }
        startMasked();
        update(crc, head, headOffset + Bth.LENGTH, headerLength - Bth.LENGTH);
        update(crc, payload, payloadOffset, payloadLength);
        for (int i = 0; i < pad; i++) {
            crc.update(0);
        }
        return (int) crc.getValue();
    }

    /**
     * ICRC of a full IPv4 frame ({@code frame} holds IPv4 .. ICRC from {@code offset}), using
     * its own header fields; for verifying captures and test vectors.
     */
    public int computeFromIpv4(ByteBuffer frame, int offset, int lengthInclIcrc) {
        for (int i = 0; i < MASKED_LENGTH; i++) {
            masked.put(i, frame.get(offset + i));
        }
        return computeMasked(frame, offset + Ipv4UdpHeader.LENGTH, lengthInclIcrc - Ipv4UdpHeader.LENGTH);
    }

    private int computeMasked(ByteBuffer roce, int roceOffset, int roceLength) {
        startMasked();
        update(crc, roce, roceOffset + Bth.LENGTH, roceLength - Bth.LENGTH - LENGTH);
        return (int) crc.getValue();
    }

    /** Restarts the CRC over the LRH stand-in and the masked IPv4, UDP and BTH headers in {@link #masked}. */
    private void startMasked() {
        masked.put(Ipv4UdpHeader.TOS_OFFSET, (byte) 0xFF);
        masked.put(Ipv4UdpHeader.TTL_OFFSET, (byte) 0xFF);
        masked.putShort(Ipv4UdpHeader.CHECKSUM_OFFSET, (short) 0xFFFF);
        masked.putShort(Ipv4UdpHeader.UDP_CHECKSUM_OFFSET, (short) 0xFFFF);
        masked.put(Ipv4UdpHeader.LENGTH + Bth.ECN_OFFSET, (byte) 0xFF);
        crc.reset();
        crc.update(LRH_STANDIN);
        crc.update(masked.array(), 0, MASKED_LENGTH);
    }

    /** Streams [at, at + length) of {@code b} into {@code crc} (no duplicate, no copy), then puts its position and limit back. */
    static void update(CRC32 crc, ByteBuffer b, int at, int length) {
        int position = b.position();
        int limit = b.limit();
        b.limit(at + length).position(at);
        crc.update(b);
        b.limit(limit).position(position);
    }

    /** Computes the ICRC and stores it, LSB first, in the datagram's last 4 bytes. */
    public int write(int srcIp, int dstIp, int srcPort, int dstPort, ByteBuffer roce, int offset, int length) {
        int value = compute(srcIp, dstIp, srcPort, dstPort, roce, offset, length);
        store(roce, offset + length - LENGTH, value);
        return value;
    }

    /** True if the datagram's stored ICRC matches. */
    public boolean verify(int srcIp, int dstIp, int srcPort, int dstPort, ByteBuffer roce, int offset, int length) {
        if (length < Bth.LENGTH + LENGTH) {
            return false;
        }
        return compute(srcIp, dstIp, srcPort, dstPort, roce, offset, length) == load(roce, offset + length - LENGTH);
    }

    /** Reads an ICRC stored LSB first. */
    public static int load(ByteBuffer b, int at) {
        int v = b.getInt(at);
        return b.order() == ByteOrder.LITTLE_ENDIAN ? v : Integer.reverseBytes(v);
    }

    /** Stores an ICRC LSB first, whatever the buffer's byte order. */
    public static void store(ByteBuffer b, int at, int value) {
        b.putInt(at, b.order() == ByteOrder.LITTLE_ENDIAN ? value : Integer.reverseBytes(value));
    }
}
