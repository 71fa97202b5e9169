package io.netreduce.wire.roce;

import io.netreduce.wire.udp.AddressCache;
import io.netreduce.wire.udp.NativeUdp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;
import java.util.zip.CRC32;

/**
 * RoCEv2 Invariant CRC (IBTA Annex A17): standard CRC-32 over 8 bytes of 0xFF, the IPv4
 * and UDP headers and the BTH with their variant fields masked to ones, then everything
 * after the BTH through the pad. Stored least-significant byte first.
 *
 * <p>Over UDP sockets the real IP header is the kernel's, so the canonical header of
 * {@link Ipv4UdpHeader} stands in for it. Not thread-safe: each thread keeps its own
 * instance; computing allocates nothing and streams the payload straight from the buffer,
 * whose position and limit it moves for the duration of the call. Where the native library
 * loads and the datagram lies in direct memory, the masked headers and the rest go to
 * {@link NativeUdp#crc32} in one call (see {@link IcrcTemplate}).
 */
public final class Icrc {
    public static final int LENGTH = 4;
    private static final int MASKED_LENGTH = Ipv4UdpHeader.LENGTH + Bth.LENGTH;
    /** The 8 bytes of ones standing in for the LRH, then the masked IPv4, UDP and BTH headers. */
    private static final int LRH = 8;
    private static final int PREFIX = LRH + MASKED_LENGTH;
    /** Room after the masked headers for a datagram's other headers, to take them in the same native call. */
    static final int HEADER_ROOM = 64;
    private static final boolean NATIVE = NativeUdp.available();

    private final CRC32 crc = new CRC32();
    /** The prefix, and a gathered datagram's other headers after it; the masked headers are a view from byte 8. */
    private final ByteBuffer prefix = ByteBuffer.allocateDirect(PREFIX + HEADER_ROOM);
    private final ByteBuffer masked;
    private final long prefixAddress = NATIVE ? NativeUdp.address(prefix) : 0;
    private final AddressCache addresses = new AddressCache();

    public Icrc() {
        for (int i = 0; i < LRH; i++) {
            prefix.put(i, (byte) -1);
        }
        masked = prefix.slice(LRH, MASKED_LENGTH);
    }

    /**
     * ICRC of a RoCE datagram ({@code roce} holds BTH .. ICRC at [offset, offset + length)),
     * sent from {@code srcIp:srcPort} to {@code dstIp:dstPort}.
     */
    public int compute(int srcIp, int dstIp, int srcPort, int dstPort, ByteBuffer roce, int offset, int length) {
        if (length < Bth.LENGTH + LENGTH) {
            throw new IllegalArgumentException("RoCE datagram of " + length + " bytes is shorter than BTH + ICRC");
        }
        Ipv4UdpHeader.writeUnchecked(masked, 0, srcIp, dstIp, srcPort, dstPort, length);
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
        Ipv4UdpHeader.writeUnchecked(masked, 0, srcIp, dstIp, srcPort, dstPort, length);
        for (int i = 0; i < Bth.LENGTH; i++) {
            masked.put(Ipv4UdpHeader.LENGTH + i, head.get(headOffset + i));
        }
        mask();
        int rest = headerLength - Bth.LENGTH;
        if (NATIVE && pad == 0 && rest <= HEADER_ROOM && payload.isDirect()) {
            prefix.put(PREFIX, head, headOffset + Bth.LENGTH, rest);
            return NativeUdp.crc32(0, prefixAddress, PREFIX + rest,
                    addresses.of(payload) + inBounds(payload, payloadOffset, payloadLength), payloadLength);
        }
        startPrefix();
        update(crc, head, headOffset + Bth.LENGTH, rest);
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
        mask();
        int rest = roceLength - Bth.LENGTH - LENGTH;
        if (NATIVE && roce.isDirect()) {
            return NativeUdp.crc32(0, prefixAddress, PREFIX,
                    addresses.of(roce) + inBounds(roce, roceOffset + Bth.LENGTH, rest), rest);
        }
        startPrefix();
        update(crc, roce, roceOffset + Bth.LENGTH, rest);
        return (int) crc.getValue();
    }

    /** Sets the variant fields of the IPv4, UDP and BTH headers in {@link #masked} to ones. */
    private void mask() {
        masked.put(Ipv4UdpHeader.TOS_OFFSET, (byte) 0xFF);
        masked.put(Ipv4UdpHeader.TTL_OFFSET, (byte) 0xFF);
        masked.putShort(Ipv4UdpHeader.CHECKSUM_OFFSET, (short) 0xFFFF);
        masked.putShort(Ipv4UdpHeader.UDP_CHECKSUM_OFFSET, (short) 0xFFFF);
        masked.put(Ipv4UdpHeader.LENGTH + Bth.ECN_OFFSET, (byte) 0xFF);
    }

    /** Restarts the JDK's CRC over the prefix: the LRH stand-in and the masked headers. */
    private void startPrefix() {
        crc.reset();
        update(crc, prefix, 0, PREFIX);
    }

    /**
     * {@code at}, once [at, at + length) is checked to lie within {@code b}: native code reads
     * it by address, where a wrong length would read past the buffer instead of throwing.
     */
    static int inBounds(ByteBuffer b, int at, int length) {
        return Objects.checkFromIndexSize(at, length, b.capacity());
    }

    /** Streams [at, at + length) of {@code b} into {@code crc} (no duplicate, no copy), then puts its position and limit back. */
    static void update(CRC32 crc, ByteBuffer b, int at, int length) {
        inBounds(b, at, length); // the same exception as the native path's
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
